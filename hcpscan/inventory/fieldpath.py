"""Field paths such as ``spec.ingress[0].ports[1].port`` or ``metadata.labels["app.kubernetes.io/name"]``.

A path is a tuple of steps: ``str`` for a mapping key, ``int`` for a list index.
The same steps drive plain access to a decoded body and the search for the
field's own line in the YAML node tree (see ``hcpscan.sources.positions``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

Step = str | int

_TOKEN = re.compile(
    r"""
    (?P<index>\[(?P<num>\d+)\])                              # [3]
    | \[(?P<q>["'])(?P<quoted>(?:\\.|(?!(?P=q)).)*)(?P=q)\]  # ["a.b/c"]
    | (?P<dot>\.)
    | (?P<key>[^.\[\]]+)
    """,
    re.VERBOSE,
)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_\-]+")


class FieldPathError(ValueError):
    pass


def parse_path(path: str | tuple[Step, ...] | list[Step]) -> tuple[Step, ...]:
    if not isinstance(path, str):
        return tuple(path)
    return _parse_text(path)


@lru_cache(maxsize=4096)
def _parse_text(path: str) -> tuple[Step, ...]:
    """Analyses and rules read the same few paths of every object: each is parsed once."""
    steps: list[Step] = []
    pos = 0
    expect_key = True
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if not m:
            raise FieldPathError(f"cannot parse field path {path!r} at {pos}")
        if m.group("index") is not None:
            steps.append(int(m.group("num")))
            expect_key = False
        elif m.group("quoted") is not None:
            steps.append(m.group("quoted").replace("\\" + m.group("q"), m.group("q")))
            expect_key = False
        elif m.group("dot"):
            expect_key = True
        else:
            if not expect_key:
                raise FieldPathError(f"missing '.' before {m.group('key')!r} in {path!r}")
            steps.append(m.group("key"))
            expect_key = False
        pos = m.end()
    return tuple(steps)


def format_path(steps: tuple[Step, ...] | list[Step]) -> str:
    # The same paths (a container's env value, an arg) recur in every object of a kind:
    # a large scan formats hundreds of thousands of them, from a few thousand distinct ones.
    return _formatted(tuple(steps))


@lru_cache(maxsize=1 << 15, typed=True)
def _formatted(steps: tuple[Step, ...]) -> str:
    out = []
    for step in steps:
        if isinstance(step, int):
            out.append(f"[{step}]")
        elif _PLAIN_KEY.fullmatch(step):
            out.append(("." if out else "") + step)
        else:
            out.append('["' + step.replace('"', '\\"') + '"]')
    return "".join(out)


def get_path(body: Any, path: str | tuple[Step, ...], default: Any = None) -> Any:
    """The value at ``path`` in ``body``, or ``default`` when any step is not there."""
    cur = body
    for step in parse_path(path):
        if isinstance(step, int):
            if not isinstance(cur, list) or not 0 <= step < len(cur):
                return default
            cur = cur[step]
        else:
            if not isinstance(cur, dict) or step not in cur:
                return default
            cur = cur[step]
    return cur


def mapping_at(body: Any, key: str) -> dict[str, Any]:
    """``body[key]`` when ``body`` is a mapping and that value is one too, else ``{}``:
    a manifest's optional sub-mapping (metadata, spec, status) read without trusting it."""
    value = body.get(key) if isinstance(body, dict) else None
    return value if isinstance(value, dict) else {}
