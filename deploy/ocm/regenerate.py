"""Refresh the manifests the ManifestWorkReplicaSet carries from the standalone files.

    python3 deploy/ocm/regenerate.py

hcpscan-manifestworkreplicaset.yaml carries exactly the objects of
deploy/hcpscan-readonly-clusterrole.yaml, hcpscan-publisher-rbac.yaml and
hcpscan-cronjob.yaml; tests/live/test_deploy.py fails when they drift apart.
The header comment and the rest of the object are kept as they are.
"""

from __future__ import annotations

from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[1]
CARRIED = ("hcpscan-readonly-clusterrole.yaml", "hcpscan-publisher-rbac.yaml", "hcpscan-cronjob.yaml")
TARGET = DEPLOY / "ocm" / "hcpscan-manifestworkreplicaset.yaml"


def main() -> None:
    text = TARGET.read_text()
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    (replica_set,) = [d for d in yaml.safe_load_all(text) if d]
    manifests = [d for name in CARRIED for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]
    replica_set["spec"]["manifestWorkTemplate"]["workload"]["manifests"] = manifests
    TARGET.write_text(header + yaml.safe_dump(replica_set, sort_keys=False, width=100))
    print(f"wrote {TARGET.relative_to(DEPLOY.parent)}")


if __name__ == "__main__":
    main()
