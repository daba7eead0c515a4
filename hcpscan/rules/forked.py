"""The rules of a large scan evaluated in two processes, when asked for
(``HCPSCAN_FORK_RULES=1``): those that read the proxy model in a forked child, the others
(the reachability family) here, at the same time. Not the default: CPython writes a
reference count on every object read, so each page either process reads is copied —
at 500 hosted clusters ~230 MiB more (proportional set sizes summed) for ~2.8 s less.

The two families share almost nothing: the proxy model (the consumers' index, the
relations, the known CAs) is built only by the proxy rules, the required-flow results
and their path graph only by the reachability rules. The reachability graph, which the
child's rules may read, is built here before the fork (``Context.prepare``), so the
child reads the same one without building it again, and this process keeps it (and its
diagnostics) for what is read after the rules. The child is a ``fork`` of this
process after the load: it sees the frozen inventory as it is, copies only the pages it
writes, and sends back its rules' outcomes, pickled, with every inventory object it
names sent as its index (the same object here: a fix's target is the object itself).

The outcome is the sequential one: each rule's findings, result and diagnostics are put
back in the rules' order, and an analysis built ahead counts as built only if a rule
asked for it in either process (its diagnostics once, after the rules' as before). If
the child cannot start or is lost (killed by the out-of-memory killer), its rules are
evaluated here after the others, with a warning when it was lost.
"""

from __future__ import annotations

import io
import os
import pickle
import signal
from collections.abc import Collection
from typing import Any

from hcpscan.core.diagnostics import Diagnostic
from hcpscan.core.jobs import fork_refusal, may_fork
from hcpscan.inventory.objects import K8sObject
from hcpscan.rules.context import PROXY_ANALYSES, Context
from hcpscan.rules.engine import RuleOutcome, evaluate_some
from hcpscan.rules.model import Rule
from hcpscan.rules.suppress import Suppressor
from hcpscan.rules.templates import TEMPLATES


def split(rules: list[Rule]) -> tuple[list[int], list[int]]:
    """(indexes evaluated here, indexes for the child): the child takes the rules whose
    template reads the proxy model; a template that may read any analysis stays here."""
    here: list[int] = []
    child: list[int] = []
    for i, rule in enumerate(rules):
        names = TEMPLATES[rule.template].analyses
        (child if names is not None and names & PROXY_ANALYSES else here).append(i)
    return here, child


def _reads(rules: list[Rule], which: list[int]) -> set[str] | None:
    """The analyses the rules at ``which`` may read (None: any)."""
    names: set[str] = set()
    for i in which:
        declared = TEMPLATES[rules[i].template].analyses
        if declared is None:
            return None
        names |= declared
    return names


def evaluate_forked(rules: list[Rule], ctx: Context, suppressor: Suppressor,
                    keep: Collection[str] | None) -> list[RuleOutcome] | None:
    """Every rule's outcome, in order, the proxy family evaluated in a forked child;
    ``None`` when a fork does not pay or is not safe (the caller evaluates in order)."""
    here, child = split(rules)
    if not here or not child:
        return None
    if not may_fork():  # asked for (HCPSCAN_FORK_RULES=1) and not done: said, never silently
        ctx.diagnostics.append(Diagnostic(
            "HCPSCAN_FORK_RULES", None, f"the rules were evaluated in one process: "
            f"{fork_refusal() or 'forking is not safe here'}", severity="info",
            hint="the results are the same; only the rule stage takes longer"))
        return None
    # Every shareable analysis the child may read is built here, even if no rule here
    # reads it: one the child built would stay there, with its diagnostics (the graph's
    # invalid policies) and what is read after the rules (the exposures).
    child_reads = _reads(rules, child)
    shared = set(ctx.shareable()) if child_reads is None else child_reads & set(ctx.shareable())
    for name in sorted(shared):
        try:
            ctx.prepare(name, ctx.shareable()[name])
        except Exception:  # noqa: BLE001 - as in one process: each check asking for it fails
            ctx.asked.discard(name)
            return None
    parent = os.getpid()
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
    except OSError:  # no processes left (a container's pids limit): all of them here
        return _all_here(rules, ctx, suppressor, keep)
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(read_end)
        _end_with(parent)
        _child(rules, child, ctx, suppressor, keep, write_end)
    os.close(write_end)
    finished = False
    try:
        outcomes = evaluate_some(rules, here, ctx, suppressor, keep)
        theirs, lost = _receive(read_end, pid, ctx)
        finished = True
    finally:
        if not finished:  # an interrupt here: the child must not outlive the scan
            _stop(pid)
    if theirs is None:
        outcomes.update(evaluate_some(rules, child, ctx, suppressor, keep))
        asked: set[str] = set()
    else:
        child_outcomes, asked = theirs
        outcomes.update(child_outcomes)
    ctx.adopt(asked | ctx.asked)
    if lost:
        ctx.diagnostics.append(lost)
    return [outcomes[i] for i in range(len(rules))]


def _all_here(rules: list[Rule], ctx: Context, suppressor: Suppressor,
              keep: Collection[str] | None) -> list[RuleOutcome]:
    outcomes = evaluate_some(rules, range(len(rules)), ctx, suppressor, keep)
    ctx.adopt(ctx.asked)
    return list(outcomes.values())


def _end_with(parent: int) -> None:  # pragma: no cover - runs in the child
    """Have the kernel end this child when the scan's process ends (killed, a SIGTERM
    that stops it at once) instead of letting it evaluate rules nobody will read."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # no prctl: the child ends on its own when done
        return
    if os.getppid() != parent:  # the scan ended before the request was made
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _child(rules: list[Rule], which: list[int], ctx: Context, suppressor: Suppressor,
           keep: Collection[str] | None, write_end: int) -> None:  # pragma: no cover
    """Evaluate ``which`` and write the outcomes and the analyses asked; never returns
    (``os._exit``: the parent's buffers, atexit handlers and temporary files are its own)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it on an interrupt
        outcomes = evaluate_some(rules, which, ctx, suppressor, keep)
        with os.fdopen(write_end, "wb") as out:
            _InventoryPickler(out, ctx.inventory.objects).dump((outcomes, ctx.asked))
        code = 0
    except BaseException:  # noqa: BLE001 - anything: the parent evaluates these rules itself
        pass
    finally:
        os._exit(code)


def _receive(read_end: int, pid: int, ctx: Context
             ) -> tuple[tuple[dict[int, RuleOutcome], set[str]] | None, Diagnostic | None]:
    """The child's outcomes (None if it failed) and, when it was lost to a signal, the
    warning that says so."""
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        try:
            return _InventoryUnpickler(io.BytesIO(data), ctx.inventory.objects).load(), None
        except Exception:  # noqa: BLE001 - a truncated answer: evaluated here instead
            pass
    lost = None
    if os.WIFSIGNALED(status):
        lost = Diagnostic("-", None, f"the process evaluating the proxy rules was ended by signal "
                          f"{os.WTERMSIG(status)} (the out-of-memory killer?); they were "
                          "evaluated in the main process instead", severity="warning",
                          hint="give the scan more memory, or set HCPSCAN_JOBS=1 to use one process")
    return None, lost


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


class _InventoryPickler(pickle.Pickler):
    """Pickles an inventory object as its index in the inventory (the parent holds the
    same objects at the same indexes: the child is its fork)."""

    def __init__(self, file: Any, objects: list[K8sObject]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._objects = objects
        self._index: dict[int, int] | None = None

    def persistent_id(self, obj: Any) -> int | None:  # noqa: D102 - pickle's hook
        if not isinstance(obj, K8sObject):
            return None
        if self._index is None:
            self._index = {id(o): i for i, o in enumerate(self._objects)}
        return self._index.get(id(obj))


class _InventoryUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, objects: list[K8sObject]) -> None:
        super().__init__(file)
        self._objects = objects

    def persistent_load(self, pid: Any) -> K8sObject:  # noqa: D102 - pickle's hook
        return self._objects[pid]
