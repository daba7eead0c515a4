"""Every case of the clients' own published NO_PROXY tables, and tables observed
from real wget and a real JDK, through the evaluator."""

from __future__ import annotations

import pytest

from hcpscan.analysis.proxy.env import evaluate_env
from hcpscan.analysis.proxy.noproxy import bypasses

from .conftest import CONFORMANCE, DATA, table

GO = table(CONFORMANCE / "go.json")
CURL = table(CONFORMANCE / "curl.json")
PFE = table(CONFORMANCE / "proxy-from-env.json")
WGET = table(DATA / "observed_wget.json")
JAVA = table(DATA / "observed_java.json")


def _ids(cases: list[dict]) -> list[str]:
    return [f"{i}:{c.get('no_proxy', c.get('non_proxy_hosts'))!r}->{c['url']}"
            for i, c in enumerate(cases)]


def test_tables_are_complete() -> None:
    assert (len(GO["cases"]), len(CURL["cases"]), len(PFE["cases"])) == (64, 78, 104)


@pytest.mark.parametrize("case", GO["cases"], ids=_ids(GO["cases"]))
def test_go_table(case: dict) -> None:
    assert bypasses("go", case["no_proxy"], case["url"]).bypass is case["bypass"]


@pytest.mark.parametrize("case", [c for c in GO["cases"] if "config" in c],
                         ids=_ids([c for c in GO["cases"] if "config" in c]))
def test_go_table_proxy_for_url(case: dict) -> None:
    env = {"HTTP_PROXY": case["config"]["HTTPProxy"], "NO_PROXY": case["config"]["NoProxy"]}
    result = evaluate_env("go", env, case["url"])
    assert (None if result.bypass else result.proxy) == case["expected_proxy"]


@pytest.mark.parametrize("case", CURL["cases"], ids=_ids(CURL["cases"]))
def test_curl_table(case: dict) -> None:
    assert bypasses("curl", case["no_proxy"], case["url"]).bypass is case["bypass"]


@pytest.mark.parametrize("case", PFE["cases"], ids=_ids(PFE["cases"]))
def test_proxy_from_env_table(case: dict) -> None:
    assert bypasses("proxy-from-env", case["no_proxy"], case["url"]).bypass is case["bypass"]


@pytest.mark.parametrize("case", PFE["cases"], ids=_ids(PFE["cases"]))
def test_proxy_from_env_table_with_its_environment(case: dict) -> None:
    result = evaluate_env("proxy-from-env", case["env"], case["url"])
    assert (None if result.bypass else result.proxy) == case["expected_proxy"]


@pytest.mark.parametrize("case", WGET["cases"], ids=_ids(WGET["cases"]))
def test_observed_wget(case: dict) -> None:
    assert bypasses("wget", case["no_proxy"], case["url"]).bypass is case["bypass"]


@pytest.mark.parametrize("case", JAVA["cases"], ids=_ids(JAVA["cases"]))
def test_observed_java(case: dict) -> None:
    assert bypasses("java", case["non_proxy_hosts"], case["url"]).bypass is case["bypass"]
