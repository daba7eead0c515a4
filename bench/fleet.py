"""Benchmark: `hcpscan fleet` against listing what it reads, on a simulated hub.

    python3 bench/fleet.py                     # 1,000 and 5,000 managed clusters
    python3 bench/fleet.py --sizes 1000 --repeat 5

For each size it starts the project's stand-in API server (tests/live/apiserver.py)
holding a simulated fleet (tests/live/ocm.py: ManagedClusters, hcpscan's
ManifestWorks carrying the committed ManifestWorkReplicaSet's template and status
feedback, PlacementDecisions of 100 clusters) and measures, best of --repeat:

* the floor: the four paged lists `hcpscan fleet` makes (ManagedClusters,
  ManifestWorks by the replica set's label and by name, PlacementDecisions), through hcpscan's own
  client, JSON decoded, nothing else;
* `hcpscan fleet --format json` in process (the same lists, then the matrix and
  its rendering);

and prints the ratio. Not part of the test suite; speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hcpscan.cli.main import main  # noqa: E402
from hcpscan.sources.live import ClusterTarget, connect  # noqa: E402
from hcpscan.sources.live.lister import list_all  # noqa: E402
from tests.live import ocm  # noqa: E402
from tests.live.apiserver import (  # noqa: E402
    DEPLOY_RESOURCES,
    FLEET_HUB,
    ClusterState,
    StandInServer,
    catalog,
    server_context,
)
from tests.live.conftest import TOKEN, USER, write_kubeconfig  # noqa: E402
from tests.live.pki import CertificateAuthority  # noqa: E402

MWRS = ROOT / "deploy" / "ocm" / "hcpscan-manifestworkreplicaset.yaml"


def floor(config: Path) -> None:
    conn = connect(ClusterTarget(str(config), request_timeout=120))
    try:
        list_all(conn, "/apis/cluster.open-cluster-management.io/v1/managedclusters", 500)
        list_all(conn, "/apis/work.open-cluster-management.io/v1/manifestworks", 500,
                 {"fieldSelector": "metadata.name=hcpscan"})
        list_all(conn, "/apis/work.open-cluster-management.io/v1/manifestworks", 500,
                 {"labelSelector": "work.open-cluster-management.io/manifestworkreplicaset="
                                   "hcpscan-fleet.hcpscan"})
        list_all(conn, "/apis/cluster.open-cluster-management.io/v1beta1/namespaces/hcpscan-fleet/"
                 "placementdecisions", 500,
                 {"labelSelector": "cluster.open-cluster-management.io/placement=hcpscan-fleet"})
    finally:
        conn.close()


def fleet(config: Path, out: Path) -> None:
    with contextlib.redirect_stderr(io.StringIO()):
        main(["fleet", "--kubeconfig", str(config), "--format", "json", "-o", str(out),
              "--request-timeout", "120"])


def best(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(size: int, repeat: int, folder: Path) -> tuple[float, float]:
    plan = ocm.FleetPlan(size, stale=size // 25, failed=size // 30, never_reported=size // 50,
                         no_work=size // 100, not_placed=size // 20)
    objects, _ = ocm.simulated_fleet(plan, ocm.load_template(MWRS), dt.datetime.now(dt.UTC))
    ca = CertificateAuthority()
    state = ClusterState([*catalog(), *DEPLOY_RESOURCES, *FLEET_HUB], tokens={TOKEN: USER})
    for obj in objects:
        state.add(obj)
    server = StandInServer(state, server_context(ca, folder)).start()
    try:
        config = write_kubeconfig(folder / "hub.kubeconfig", server.url, ca.cert_pem)
        listing = best(repeat, lambda: floor(config))
        whole = best(repeat, lambda: fleet(config, folder / "fleet.json"))
    finally:
        server.stop()
    return listing, whole


def run(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print("| managed clusters | the four lists (s) | hcpscan fleet (s) | x listing |")
    print("|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            listing, whole = measure(size, args.repeat, Path(tmp))
        print(f"| {size:,} | {listing:.2f} | {whole:.2f} | {whole / listing:.2f} |", flush=True)


if __name__ == "__main__":
    run()
