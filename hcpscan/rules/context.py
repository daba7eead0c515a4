"""What a check template can see: the inventory, the user's inputs, and analyses built once."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hcpscan.analysis.proxy.index import ProxyConsumers
from hcpscan.analysis.proxy.relations import Relations
from hcpscan.analysis.reachability.graph import ReachabilityGraph
from hcpscan.analysis.reachability.required import FlowIndex
from hcpscan.analysis.reachability.scan_graph import REACHABILITY, scan_graph
from hcpscan.core.diagnostics import Diagnostic
from hcpscan.inventory import Inventory
from hcpscan.rules.config import ScanConfig

REQUIRED_FLOWS = "required-flows"  # the flow results and the path graph they share
# The proxy model and what is built on it (templates over proxy consumers read these).
PROXY_ANALYSES = frozenset({"proxy", "proxy-relations", "known-proxy-cas",
                            "proxy-configuring-objects", "same-value-roots"})


class Context:
    def __init__(self, inventory: Inventory, config: ScanConfig | None = None) -> None:
        self.inventory = inventory
        self.config = config or ScanConfig()
        self._analyses: dict[str, Any] = {}
        # What analyses could not read (invalid NetworkPolicies, a bad perimeter file):
        # reported with the scan's diagnostics.
        self.diagnostics: list[Diagnostic] = []
        # Seconds each analysis took to build (the scan reports the graph's as a stage).
        self.build_seconds: dict[str, float] = {}

    def analysis(self, name: str, build: Callable[[Inventory], Any]) -> Any:
        """An analysis (reachability graph, proxy model) built on first use, then shared."""
        if name not in self._analyses:
            start = time.perf_counter()
            self._analyses[name] = build(self.inventory)
            self.build_seconds[name] = time.perf_counter() - start
        return self._analyses[name]

    def built_names(self) -> list[str]:
        """The names of the analyses built so far."""
        return list(self._analyses)

    def drop(self, name: str) -> None:
        """Forget an analysis no rule left will read (its memory is freed for the next)."""
        self._analyses.pop(name, None)

    def built(self, name: str) -> Any | None:
        """An analysis if some rule already built it, else ``None`` (never builds)."""
        return self._analyses.get(name)

    @property
    def proxy(self) -> ProxyConsumers:
        """The proxy model's consumers, indexed (built on first use, then shared)."""
        return self.analysis("proxy", ProxyConsumers)

    @property
    def relations(self) -> Relations:
        """The pairings between proxy consumers and what they must agree with (built once)."""
        return self.analysis(
            "proxy-relations", lambda inv: Relations(inv, self.proxy))

    def reachability(self) -> ReachabilityGraph:
        """The scan's reachability graph (with the perimeter file, if given), built by
        the analysis stage on the first rule that asks, then shared."""
        graph: ReachabilityGraph = self.analysis(
            REACHABILITY, lambda inventory: scan_graph(inventory, self.config.firewall,
                                                       self.diagnostics))
        return graph

    def flow_index(self) -> FlowIndex:
        """The required-flow results asked so far and their path graph (networkx when exported; empty
        until a rule asks a flow; each flow is asked once per HostedCluster)."""
        index: FlowIndex = self.analysis(REQUIRED_FLOWS, lambda _inventory: FlowIndex())
        return index
