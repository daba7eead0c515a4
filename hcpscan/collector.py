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
import threading
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


_NEVER = 1 << 30  # collections of a generation before the next older one is collected
_sparing_lock = threading.Lock()
_sparing = 0  # sparing blocks open in this process (scans run in threads may overlap)
_saved: tuple[bool, tuple[int, ...]] = (True, (700, 10, 10))  # the collector's state before


@contextlib.contextmanager
def sparing(young: int = 700) -> Iterator[None]:
    """The collector on for the youngest generation only, a collection every ``young`` net
    allocations (Python's default): for the rules and the analyses behind them, which make
    cyclic garbage that dies young (paused, it piled up: 44 MiB more peak RSS at 100
    hosted clusters). What survives a young collection is not walked again inside the
    block: the path graph, the proxy index and the flow results stay alive through the
    rules, and each collection of an older generation walked all of them again (at 500
    hosted clusters seven collections of the middle one took 0.44 s of the rules' 4.7 s
    and found no garbage); the inventory is frozen (``building``) besides. With no older
    generation to feed, young collections are best small (N = 500, the rules' young
    collections: 0.09 s every 700 allocations, 0.12 s every 5,000, 0.2 s every 20,000).
    Whoever keeps the analyses past the block drops them first
    (``rules.context.Context.release``), so the older generations' next collection finds
    little left to walk."""
    global _sparing, _saved
    with _sparing_lock:  # scans overlapping in threads: the first in saves, the last out restores
        if _sparing == 0:
            _saved = (gc.isenabled(), gc.get_threshold())
            gc.set_threshold(young, _NEVER, _NEVER)
            gc.enable()
        _sparing += 1
    try:
        yield
    finally:
        with _sparing_lock:
            _sparing -= 1
            if _sparing == 0:
                enabled, threshold = _saved
                gc.set_threshold(*threshold)
                if not enabled:
                    gc.disable()
