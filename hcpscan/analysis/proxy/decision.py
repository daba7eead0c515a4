"""The answer of a NO_PROXY evaluator: direct or through the proxy, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# ``matched`` values that are not entries of the list.
LOOPBACK = "<loopback>"  # the client never proxies loopback, whatever NO_PROXY says
DEFAULT_LIST = "<default>"  # a built-in list (Java's http.nonProxyHosts default)


@dataclass(frozen=True, slots=True)
class Decision:
    runtime: str
    bypass: bool  # True: the request goes direct
    matched: str | None = None  # the entry (as written) or built-in rule that made it direct
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "bypass": self.bypass, "matched": self.matched,
                "reason": self.reason}


def direct(runtime: str, matched: str, reason: str) -> Decision:
    return Decision(runtime, True, matched, reason)


def proxied(runtime: str, reason: str = "no entry matches") -> Decision:
    return Decision(runtime, False, None, reason)
