"""Typed objects with their source locations, and the queries made on them."""

from hcpscan.inventory.objects import K8sObject, SourceLocation
from hcpscan.inventory.store import Inventory

__all__ = ["Inventory", "K8sObject", "SourceLocation"]
