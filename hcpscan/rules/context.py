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
        # The analyses some rule asked for (dropping one later does not take it out).
        self.asked: set[str] = set()
        # Built ahead of any rule (``prepare``): analysis, seconds, the diagnostics its build
        # gave; it counts as built only once a rule asks for it.
        self._prepared: dict[str, tuple[Any, float, list[Diagnostic]]] = {}

    def analysis(self, name: str, build: Callable[[Inventory], Any]) -> Any:
        """An analysis (reachability graph, proxy model) built on first use, then shared."""
        if name not in self._analyses:
            self.asked.add(name)
            if name in self._prepared:
                self._analyses[name], self.build_seconds[name], found = self._prepared.pop(name)
                self.diagnostics.extend(found)
            else:
                start = time.perf_counter()
                self._analyses[name] = build(self.inventory)
                self.build_seconds[name] = time.perf_counter() - start
        return self._analyses[name]

    def prepare(self, name: str, ask: Callable[[], Any]) -> None:
        """Build analysis ``name`` now (``ask`` asks for it: ``ctx.reachability``) without
        counting it as asked: rules evaluated in a forked process share the one built
        here. Until a rule asks for it (or ``adopt``), the scan is as if it were not built:
        its diagnostics are held back and ``built`` does not see it."""
        if name in self._analyses or name in self._prepared:
            return
        held, self.diagnostics = self.diagnostics, []
        try:
            ask()
        finally:
            found, self.diagnostics = self.diagnostics, held
        self.asked.discard(name)
        self._prepared[name] = (self._analyses.pop(name), self.build_seconds.pop(name), found)

    def shareable(self) -> dict[str, Callable[[], Any]]:
        """The analyses ``prepare`` can build ahead, each with how it is asked for."""
        return {REACHABILITY: self.reachability}

    def adopt(self, names: set[str]) -> None:
        """Count as asked here the prepared analyses among ``names`` (those rules asked for
        in another process); a prepared analysis nobody asked for is forgotten."""
        for name in list(self._prepared):
            if name in names:
                self.analysis(name, lambda _inventory: None)
            else:
                del self._prepared[name]

    def built_names(self) -> list[str]:
        """The names of the analyses built so far."""
        return list(self._analyses)

    def drop(self, name: str) -> None:
        """Forget an analysis no rule left will read (its memory is freed for the next)."""
        self._analyses.pop(name, None)

    def release(self) -> None:
        """Forget every analysis, built or prepared (the scan's rules and exposures are
        done): most of their objects are freed at once, not left for the cyclic collector
        to walk (``collector.sparing``)."""
        self._analyses.clear()
        self._prepared.clear()

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
