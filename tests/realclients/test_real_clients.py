"""Real-client conformance: every client hcpscan models, as installed here, runs
over ≥500 seeded cases inside a private network namespace (``unshare``) with a
recording proxy on loopback, and must agree with the evaluator for the release
it is. Agreement means the same outcome (direct / proxy / error) and, for
requests that reach the proxy, the same variable or property choosing it.

Takes about 1-2 minutes (plus the npm downloads on a first run). A client that
cannot be found or installed fails the run, naming it: `.ci/run` installs them all.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hcpscan.analysis.proxy.env import evaluate_env
from hcpscan.analysis.proxy.noproxy import UnknownRuntime, runtime_ref
from tests.conftest import require

from .cases import Group, env_groups, fact_groups, java_groups
from .clients import CLIENTS, Client, Prepared, Unavailable
from .runner import NamespaceUnavailable, Observed, run_client

SEED = int(os.environ.get("HCPSCAN_REALCLIENTS_SEED", "16"))
GROUPS = 110  # x 5 URLs = 550 generated cases per client, plus the issue's own facts
MIN_CASES = 500


def _unavailable(reason: str) -> None:
    require(False, f"a client this suite runs ({reason})")


def _groups(client: Client) -> list[Group]:
    seed = SEED * 1000 + CLIENTS.index(client)
    if client.java:
        return java_groups(seed, GROUPS)
    return env_groups(seed, GROUPS) + fact_groups()


def expected(runtime: str, group: Group, url: str) -> tuple[str, str | None]:
    decision = evaluate_env(runtime, group.env, url)
    return decision.outcome, decision.variable if decision.outcome == "proxy" else None


def disagreements(runtime: str, groups: list[Group],
                  observed: dict[tuple[int, int], Observed]) -> list[str]:
    out = []
    for group in groups:
        for index, url in enumerate(group.urls):
            real = observed[(group.gid, index)]
            want = expected(runtime, group, url)
            if (real.outcome, real.variable) != want:
                out.append(f"{url} with {group.env}: the client -> {real.outcome} "
                           f"{real.variable or ''} ({real.detail}); hcpscan {runtime} -> "
                           f"{want[0]} {want[1] or ''}")
    return out


@pytest.mark.parametrize("client", CLIENTS, ids=[c.label for c in CLIENTS])
def test_real_client_agrees_with_the_evaluator(client: Client, tmp_path: Path) -> None:
    try:
        prepared: Prepared = client.prepare(tmp_path)
    except Unavailable as exc:
        _unavailable(f"{client.label}: {exc}")
    try:
        runtime = str(runtime_ref(f"{client.runtime}@{prepared.version}"))
    except UnknownRuntime as exc:
        pytest.fail(f"{client.label} {prepared.version} is installed but not modelled: {exc}")
    groups = _groups(client)
    try:
        observed = run_client(groups, tmp_path / "run", prepared.command, client.refusal,
                              client.per_group)
    except NamespaceUnavailable as exc:
        _unavailable(str(exc))
    cases = sum(len(g.urls) for g in groups)
    assert cases >= MIN_CASES
    outcomes = {o.outcome for o in observed.values()}
    assert {"direct", "proxy"} <= outcomes, f"the cases never exercised both routes: {outcomes}"
    wrong = disagreements(runtime, groups, observed)
    assert not wrong, f"{client.label} {prepared.version} ({runtime}) disagrees with hcpscan " \
        f"on {len(wrong)}/{cases} cases:\n" + "\n".join(wrong[:15])
