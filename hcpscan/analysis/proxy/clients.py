"""How different HTTP clients read the same proxy settings.

* ``case_readers``: which case of a variable each client reads, for ``agreement``'s
  ``variable-case`` relation (PRX006). Whether noProxy entries mean the same to every
  client is ``proxy_values``' ``portable`` condition (PRX007,
  ``hcpscan.analysis.proxy.portability``).

Which variable each client reads comes from the proxy model (``env.choose``), so the
evidence names the runtimes exactly as the model knows them.
"""

from __future__ import annotations

from hcpscan.analysis.proxy.env import choose
from hcpscan.analysis.proxy.portability import ENV_RUNTIMES


def readers(env: dict[str, str], scheme: str, which: str) -> dict[str, list[str]]:
    """variable -> runtimes that take their value from it ("(none)" for runtimes that
    read neither)."""
    out: dict[str, list[str]] = {}
    for rt in ENV_RUNTIMES:
        choice = choose(rt, env, scheme)
        var = choice.proxy_var if which == "proxy" else choice.no_proxy_var
        out.setdefault(var or "(none)", []).append(rt)
    return out


def _readers_text(groups: dict[str, list[str]]) -> str:
    return "; ".join(f"{var}: {', '.join(rts)}" for var, rts in groups.items())


# canonical field -> (scheme whose choice tells who reads it, proxy or no_proxy choice)
_FIELD_CHOICE = {"httpProxy": ("http", "proxy"), "httpsProxy": ("https", "proxy"),
                 "noProxy": ("https", "no_proxy")}


def case_readers(env: dict[str, str], field: str) -> str:
    """Which variable of ``env`` each client takes ``field`` from (``agreement``'s evidence
    on upper- and lower-case variables)."""
    scheme, which = _FIELD_CHOICE[field]
    return _readers_text(readers(env, scheme, which))
