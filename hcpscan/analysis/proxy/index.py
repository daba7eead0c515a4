"""Who uses a proxy, indexed the ways rules ask: by object, by namespace, by holder.

Built once per scan from the inventory (``ProxyConsumers(inventory)``) and handed to
templates through the rule context (``ctx.proxy``), so a template only judges what the
model found and never builds or caches it.
"""

from __future__ import annotations

from collections.abc import Iterator

from hcpscan.analysis.proxy import containers as ct
from hcpscan.analysis.proxy.effective import effective_proxies
from hcpscan.analysis.proxy.settings import ConsumerProxy
from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import K8sObject


class ProxyConsumers:
    """Every consumer of a proxy in the input (``effective_proxies``), in model order."""

    def __init__(self, inventory: Inventory) -> None:
        self.all: list[ConsumerProxy] = effective_proxies(inventory)
        self._inventory = inventory
        self._by_object: dict[int, list[ConsumerProxy]] = {}
        self._by_namespace: dict[tuple[str, str], list[ConsumerProxy]] = {}
        self._by_holder: dict[int, list[ConsumerProxy]] = {}
        for c in self.all:
            self._by_object.setdefault(id(c.object), []).append(c)
            self._by_namespace.setdefault((c.object.cluster, c.object.namespace), []).append(c)
            if c.object.origin is not None and c.object.source.embedded_in:
                self._by_holder.setdefault(id(c.object.origin), []).append(c)
        # each workload's containers, read when a rule first asks for them (most rules ask of
        # a few workloads: reading every container of a fleet up front is not needed)
        self._containers: dict[int, list[ct.ContainerRef]] = {}
        self._pod_objects: set[int] | None = None
        self._paths: ct.Paths = {}
        self._with_kind: dict[str, frozenset[int]] = {}

    def __iter__(self) -> Iterator[ConsumerProxy]:
        return iter(self.all)

    def of(self, obj: K8sObject) -> list[ConsumerProxy]:
        """The consumers ``obj`` itself is (its containers, its proxy block ...)."""
        return self._by_object.get(id(obj), [])

    def consuming(self, objects: list[K8sObject]) -> list[K8sObject]:
        """Those of ``objects`` that are consumers themselves (``of`` gives them some), in order."""
        by_object = self._by_object
        return [o for o in objects if id(o) in by_object]

    def objects_with(self, kind: str) -> frozenset[int]:
        """The ids of the objects ``of`` gives a consumer of this kind (CONTAINER ...)."""
        found = self._with_kind.get(kind)
        if found is None:
            found = self._with_kind[kind] = frozenset(id(c.object) for c in self.all
                                                      if c.kind == kind)
        return found

    def holding(self, objects: list[K8sObject]) -> list[K8sObject]:
        """Those of ``objects`` that ``held_by`` gives consumers, in order."""
        by_object, by_holder = self._by_object, self._by_holder
        return [o for o in objects if id(o) in by_object or id(o) in by_holder]

    def held_by(self, obj: K8sObject) -> list[ConsumerProxy]:
        """``obj``'s consumers and those of documents stored in it (a kubeconfig in a Secret);
        the index's own list when nothing is stored in it (read it, do not change it)."""
        held = self._by_holder.get(id(obj))
        return [*self.of(obj), *held] if held else self.of(obj)

    def in_namespace(self, cluster: str, namespace: str) -> list[ConsumerProxy]:
        """Consumers whose object is in a namespace of a cluster, in model order."""
        return self._by_namespace.get((cluster, namespace), [])

    def containers_of(self, obj: K8sObject) -> list[ct.ContainerRef]:
        """Every container of a workload (proxy env or not), for rules that judge absence:
        those of a pod or pod template of the inventory (none for any other object)."""
        found = self._containers.get(id(obj))
        if found is None:
            if self._pod_objects is None:
                self._pod_objects = {id(o) for kind in ct.POD_SPEC_PATHS
                                     for o in self._inventory.of_kind(kind)}
            if id(obj) not in self._pod_objects:
                return []  # not kept: only the inventory's objects live as long as the index
            found = self._containers[id(obj)] = ct.containers_in(obj, self._paths)
        return found
