"""Keeping Python's cyclic garbage collector out of the way of a scan.

Parsed manifests are trees, and the analyses built over them hold next to no
reference cycles; yet a large dump makes millions of dicts and lists, and each
burst of allocation starts the collector again over everything alive, the whole
inventory included. Measured at 100 hosted clusters, that was most of the main
process's time while loading, and at 500 more than the rules themselves took.
Reference counting still frees whatever is dropped.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside the block; the collector's state is restored after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def building() -> Iterator[None]:
    """No cyclic collection while the inventory is built, and everything alive at the end
    frozen *before* the collector runs again: re-enabled first, its next full collection
    would walk every container just parsed (millions at 500 hosted clusters) once more."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
