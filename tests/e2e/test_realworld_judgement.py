"""The judgement table of ``fixtures/realworld/README.md`` is what hcpscan says today.

Every finding hcpscan gives on a folder of ``../shared/realworld/`` and every rule
it cannot judge there has a row in the table, saying why it is right (or why the
rule cannot judge it); a row that no longer matches the scan fails, so the table
is re-judged whenever the results change. Rows are
``| folder | rule | result | object | why |`` with result ``fail`` (object: ``Kind
namespace/name``, as the finding names it) or ``not-evaluable`` (object ``-``).
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from tests.conftest import ROOT, SHARED

TABLE = ROOT / "fixtures" / "realworld" / "README.md"
REALWORLD = SHARED / "realworld"
FOLDERS = sorted(p.name for p in REALWORLD.iterdir() if p.is_dir()) if REALWORLD.is_dir() else []
ROW = re.compile(r"^\| *`?(?P<folder>[\w.-]+)`? *\| *(?P<rule>[A-Z]{3}\d{3}) *\| *(?P<result>fail|"
                 r"not-evaluable) *\| *(?P<object>[^|]+?) *\| *(?P<why>[^|]+?) *\|$")


def _rows() -> Counter:
    rows: Counter = Counter()
    for line in TABLE.read_text().splitlines():
        m = ROW.match(line.strip())
        if m:
            assert len(m["why"]) > 20, f"a row must say why: {line}"
            rows[(m["folder"], m["rule"], m["result"], m["object"].strip("`"))] += 1
    return rows


def _scan(folder: str, run_cli) -> Counter:
    result = run_cli("scan", str(REALWORLD / folder), "--format", "json", "--no-progress")
    assert result.code in (0, 1), result.err
    report = json.loads(result.out)
    got: Counter = Counter()
    for finding in report["findings"]:
        o = finding["object"]
        where = f"{o['namespace']}/{o['name']}" if o.get("namespace") else o["name"]
        got[(folder, finding["rule_id"], "fail", f"{o['kind']} {where}")] += 1
    for rule in report["rules"]:
        if rule["status"] == "not-evaluable":
            got[(folder, rule["rule_id"], "not-evaluable", "-")] += 1
    return got


def test_the_table_covers_every_folder():
    assert FOLDERS, "../shared/realworld is missing"
    folders = {row[0] for row in _rows()}
    mentioned = set(re.findall(r"^## `([\w.-]+)`", TABLE.read_text(), re.M))
    assert set(FOLDERS) <= folders | mentioned


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_result_is_judged_in_the_table(folder, run_cli):
    expected = Counter({k: v for k, v in _rows().items() if k[0] == folder})
    got = _scan(folder, run_cli)
    assert got - expected == Counter(), "results the table does not judge"
    assert expected - got == Counter(), "rows the scan no longer gives"



def test_one_root_cause_is_one_finding_naming_every_consumer(run_cli):
    """cert-manager's three Deployments read one ConfigMap's no_proxy: one PRX005 finding,
    at the ConfigMap, whose evidence names all three containers."""
    folder = REALWORLD / "gs-wc-apps-proxy"
    result = run_cli("scan", str(folder), "--select", "PRX005", "--format", "json", "--no-progress")
    report = json.loads(result.out)
    at_config_map = [f for f in report["findings"]
                     if f["object"]["name"] == "cert-manager-app-proxy"]
    (finding,) = at_config_map
    assert finding["object"]["kind"] == "ConfigMap" and finding["field"].endswith("no_proxy")
    text = finding["message"] + "\n".join(finding["evidence"])
    for container in ("cert-manager-cainjector", "cert-manager-controller", "cert-manager-webhook"):
        assert f"container {container}" in text
    assert not [f for f in report["findings"] if f["object"]["name"].startswith("cert-manager-app")
                and f["object"]["kind"] == "Deployment"]
