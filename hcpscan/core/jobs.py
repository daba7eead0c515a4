"""How many processes a scan may use, and whether this one may fork: one home for both
(the parse workers of the load and the forked rule evaluation read them)."""

from __future__ import annotations

import os
import sys


def jobs() -> int:
    """``HCPSCAN_JOBS`` when set to a positive number, else the CPUs this process may run
    on (its affinity, not the machine's count: a container limited to 2 of 64 gets 2)."""
    configured = os.environ.get("HCPSCAN_JOBS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def fork_rules_wanted() -> bool:
    """``HCPSCAN_FORK_RULES=1``: evaluate the proxy rules in a forked process beside the
    others (``hcpscan.rules.forked``). Off by default: the fork copies every memory page
    either process touches (CPython writes a reference count on each read), so it trades
    memory for time — at 500 hosted clusters ~2.8 s less wall time for ~230 MiB more."""
    return os.environ.get("HCPSCAN_FORK_RULES", "").strip() == "1"


def may_fork() -> bool:
    """Whether a plain ``fork`` of this process is safe: Linux only (macOS's system
    libraries are not fork-safe, Windows has none), and no other thread alive (a lock
    one holds — a progress bar's, a client's — would be copied held into the child)."""
    return fork_refusal() is None


def fork_refusal() -> str | None:
    """Why this process may not fork (``may_fork``), None when it may."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return f"forking is used on Linux only, not on {sys.platform}"
    threading = sys.modules.get("threading")  # never imported: no Python thread exists
    if threading is not None and threading.active_count() > 1:
        return "another thread is running (a lock it holds would be copied held into the child)"
    return None
