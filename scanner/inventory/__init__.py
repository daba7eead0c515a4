"""Typed objects with their source locations, and the queries made on them."""

from scanner.inventory.objects import K8sObject, SourceLocation
from scanner.inventory.store import Inventory

__all__ = ["Inventory", "K8sObject", "SourceLocation"]
