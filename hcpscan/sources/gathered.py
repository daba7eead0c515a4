"""What a must-gather (or `oc adm inspect` output) collected, so absence is not misread.

A must-gather writes each resource it gathers as ``<group>/<plural>.yaml`` (or a
``<plural>/`` folder) under ``namespaces/<ns>/`` or ``cluster-scoped-resources/``,
and never gathers others: NetworkPolicies, HostedClusters, Kyverno policies.
A kind with no file anywhere in such a dump was not collected, and its absence
says nothing about the cluster. Both tools write a ``timestamp`` file at the top
of what they gathered (the folder holding ``namespaces/``, or its parent);
``hcpscan cluster --save-dump`` writes none, since it lists every kind it needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hcpscan.inventory.store import UnavailableKind
from hcpscan.sources.interface import Entry
from hcpscan.sources.layout import Placement, plural_of

TIMESTAMP = "timestamp"


@dataclass(slots=True)
class DumpRoots:
    """Resources with a file in each dump root (keyed by how the user sees the root),
    and the folders holding a ``timestamp`` file."""

    plurals: dict[str, set[str]] = field(default_factory=dict)
    stamped: set[str] = field(default_factory=set)

    def note(self, entry: Entry, placement: Placement) -> None:
        if entry.parts and entry.parts[-1] == TIMESTAMP:
            self.stamped.add(_strip(entry.display, 1))
        if placement.inspect_root is None or placement.plural is None:
            return
        root = _strip(entry.display, len(entry.parts) - len(placement.inspect_root))
        self.plurals.setdefault(root, set()).add(placement.plural)

    def gathered(self) -> dict[str, frozenset[str]]:
        """The dump roots a must-gather or `oc adm inspect` wrote, with what they hold."""
        return {root: frozenset(plurals) for root, plurals in sorted(self.plurals.items())
                if root in self.stamped or _strip(root, 1) in self.stamped}


def _strip(display: str, components: int) -> str:
    """``display`` without its last path components (archive members are ``a.tgz!x/y``)."""
    for _ in range(components):
        cut = max(display.rfind("/"), display.rfind("!"))
        display = display[:cut] if cut >= 0 else ""
    return display


def not_collected(gathered: Mapping[str, frozenset[str]], kinds: Iterable[str],
                  present: set[str]) -> dict[str, UnavailableKind]:
    """Kinds no object of which was read and that a must-gather in the input did not
    collect: their rules say so instead of "no X in the input"."""
    out: dict[str, UnavailableKind] = {}
    for kind in sorted(set(kinds) - present):
        plural = plural_of(kind)
        if all(plural in plurals for plurals in gathered.values()):
            continue
        out[kind] = UnavailableKind(
            f"not collected: the must-gather does not gather {plural}, so the cluster may "
            f"have some (`oc get {plural} -A -o yaml > {plural}.yaml`, then scan it too)",
            may_exist=False, unseen=True)
    return out
