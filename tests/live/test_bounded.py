"""Live mode bounded in time and memory (issue 22): paging that never ends, lists larger
than their budget, servers that echo the credentials they were sent."""

from __future__ import annotations

import json

import pytest

from hcpscan.sources.live import ClusterTarget, connect, discover, read_cluster
from hcpscan.sources.live.lister import ListBudget
from tests.live.apiserver import ECHO_PAD, Fault
from tests.live.conftest import TOKEN, write_kubeconfig
from tests.live.test_cluster_scan import hcpscan

SECRETS = "/api/v1/secrets"


def _read(config, kinds, budget=None, page_size=2):  # type: ignore[no-untyped-def]
    budget = ListBudget() if budget is None else budget
    conn = connect(ClusterTarget(str(config), request_timeout=5))
    return read_cluster(conn, discover(conn), kinds, page_size=page_size, budget=budget)


@pytest.mark.parametrize("mode", ["cyclic-continue", "endless-continue"])
def test_paging_without_end_ends_that_list_with_a_warning(standin, pki, tmp_path, example_bodies,
                                                         mode):
    server = standin(example_bodies)
    server.state.misbehave[SECRETS] = mode
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    read = _read(config, {"Secret", "Deployment"}, ListBudget(max_items=100))  # 87 Deployments
    pages = [r for r in server.state.requests if r.path == SECRETS]
    assert len(pages) <= 51  # the cycle is seen on its fourth page, the budget after 51 pages
    assert "Secret" in read.unavailable and "Deployment" not in read.unavailable
    assert not [o for o in read.objects if o.kind == "Secret"]  # part of a kind is not all of it
    (warning,) = [d for d in read.diagnostics if "secrets" in d.message]
    assert warning.severity == "warning"
    words = "circle" if mode == "cyclic-continue" else "more than 100 items"
    assert words in warning.message
    if mode == "cyclic-continue":
        assert [r.query.get("continue", "") for r in pages] == ["", "A", "B", "C"]


def test_a_byte_budget_ends_a_list(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    read = _read(config, {"Secret", "Namespace"}, ListBudget(max_bytes=2000), page_size=500)
    assert "MiB" in read.unavailable["Secret"].reason or "more than" in read.unavailable["Secret"].reason


def test_the_cli_says_which_list_stopped_and_offers_the_budget(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.misbehave[SECRETS] = "endless-continue"
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                             "--page-size", "2", "--max-list-items", "100", "--format", "json")
    report = json.loads(out)
    [said] = [d for d in report["diagnostics"] if "secrets" in d["message"]]
    assert "more than 100 items" in said["message"] and "--max-list-items" in said["hint"]
    assert code in (0, 1, 3, 5)


def test_server_text_is_length_limited_and_the_token_masked(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.misbehave[SECRETS] = "echo-token"
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                             "--format", "json")
    assert TOKEN not in out + err
    [said] = [d for d in json.loads(out)["diagnostics"] if "Secret" in d["message"]]
    assert "forbidden for ****" in said["message"] and len(said["message"]) < 1000
    assert f"{ECHO_PAD}" not in said["message"] and "more characters" in said["message"]


def test_a_cluster_that_refuses_every_list_exits_5_and_still_writes_the_report(
        standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.allowed = set()  # the user may list nothing
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    out = tmp_path / "report.json"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                           "--format", f"json={out}")
    assert code == 5 and "refused" in err and "403" in err
    assert json.loads(out.read_text())["summary"]["rules"]["not-evaluable"] > 0


def test_a_cluster_that_refuses_a_few_lists_is_not_exit_5(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    server.state.forbidden.add("secrets")
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format", "json")
    assert code in (0, 1) and "refused" not in err


EXEC_API = "client.authentication.k8s.io/v1beta1"


@pytest.mark.parametrize(("body", "words"), [
    ("import sys\nwhile True: sys.stdout.write('x' * 65536)\n", "wrote more than 1048576 bytes"),
    ("import sys\nsys.stdout.write('{' * 1000)\nsys.stdout.flush()\nimport time\ntime.sleep(60)\n",
     "gave no credential within 2 s"),
    ("import sys\nfor _ in range(2000): sys.stderr.write('noise ' * 10000 + '\\n')\n"
     "sys.stderr.write('login expired\\n')\nsys.exit(3)\n", "exit code 3: login expired"),
    # an ExecCredential nested deeper than Python's json recurses: no internal error
    ("import sys\nsys.stdout.write('{\"kind\": \"ExecCredential\", \"status\": ' + '[' * 50000"
     " + ']' * 50000 + '}')\n", "did not write an ExecCredential"),
    # a plugin's last words may hold its token: masked like a server's
    ("import sys\nsys.stderr.write('refresh failed for Bearer eyJhbGciOi.SeCrEt\\n')\nsys.exit(1)\n",
     "exit code 1: refresh failed for Bearer ****"),
])
def test_exec_plugin_output_is_capped_while_it_runs_and_time_limited(standin, pki, tmp_path,
                                                                      body, words):
    server = standin([])
    script = tmp_path / "plugin.py"
    script.write_text(body)
    import sys
    user = {"exec": {"apiVersion": EXEC_API, "command": sys.executable, "args": [str(script)]}}
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                             "--exec-timeout", "2")
    assert code == 2 and words in err and len(err) < 5000
    assert server.state.requests == []


def test_a_socks5_proxy_url_is_used(standin, pki, tmp_path, example_bodies):
    """kubectl dials socks5:// proxy-urls; hcpscan did not ("No module named 'socks'")."""
    from tests.live.socks import Socks5Proxy

    server = standin(example_bodies)
    proxy = Socks5Proxy()
    try:
        config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, proxy_url=proxy.url)
        code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                                 "--format", "json")
    finally:
        proxy.stop()
    assert code in (0, 1), err
    assert json.loads(out)["inventory"] and proxy.connections
    assert all(c == server.url.removeprefix("https://") for c in proxy.connections)


@pytest.mark.parametrize(("server", "words", "hint"), [
    (None, "the connection was refused", "check the server address and port"),
    ("https://no-such-host.invalid:6443", "the host name does not resolve", "DNS"),
])
def test_an_unreachable_server_is_said_in_words_without_a_pointless_hint(pki, tmp_path, server,
                                                                         words, hint):
    from tests.live.apiserver import unused_port

    url = server or f"https://127.0.0.1:{unused_port()}"
    config = write_kubeconfig(tmp_path / "kubeconfig", url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2")
    assert code == 2 and words in err and hint in err
    assert "--request-timeout" not in err and "Connection(" not in err and "Error" not in err


@pytest.mark.parametrize(("pair", "words"), [
    ("junk", "clientCertificateData is no PEM certificate"),
    ("junk-key", "clientKeyData is no PEM private key"),
    ("other-key", "clientKeyData is not the key of clientCertificateData"),
    ("good", ""),
])
def test_exec_plugin_certificates_are_checked_before_tls(standin, pki, tmp_path, pair, words):
    import sys

    from tests.live.conftest import client_certificate

    server = standin([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}])
    mine, other = client_certificate(pki, "hcpscan-reader"), client_certificate(pki, "someone")
    cert, key = mine.cert_pem.decode(), mine.key_pem.decode()
    if pair == "junk":
        cert = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"
    elif pair == "junk-key":
        key = "not a key"
    elif pair == "other-key":
        key = other.key_pem.decode()
    credential = json.dumps({"apiVersion": EXEC_API, "kind": "ExecCredential",
                             "status": {"clientCertificateData": cert, "clientKeyData": key}})
    user = {"exec": {"apiVersion": EXEC_API, "command": sys.executable,
                     "args": ["-c", f"print({credential!r})"]}}
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format", "json")
    if not words:
        assert code in (0, 1), err
        return
    assert code == 2 and words in err and "PEM lib" not in err


def test_a_cluster_run_that_exits_2_still_writes_its_report_file(pki, tmp_path):
    from tests.live.apiserver import unused_port

    config = write_kubeconfig(tmp_path / "kubeconfig", f"https://127.0.0.1:{unused_port()}",
                              pki.ca_pem)
    out = tmp_path / "report.sarif"
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2",
                           "--format", f"sarif={out}")
    assert code == 2 and "cannot connect" in err
    assert "cannot connect" in out.read_text(encoding="utf-8")


def test_a_plugin_that_leaves_a_child_holding_its_output_still_gives_its_credential(
        standin, pki, tmp_path):
    import sys

    server = standin([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}])
    credential = json.dumps({"apiVersion": EXEC_API, "kind": "ExecCredential",
                             "status": {"token": TOKEN}})
    script = tmp_path / "plugin.py"
    script.write_text("import os, sys, time\n"
                      f"sys.stdout.write({credential!r})\nsys.stdout.flush()\n"
                      "if os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\n")
    user = {"exec": {"apiVersion": EXEC_API, "command": sys.executable, "args": [str(script)]}}
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem, user=user)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                             "--exec-timeout", "30", "--format", "json")
    assert code in (0, 1), err


def test_a_discovery_listing_more_group_versions_than_any_cluster_is_refused(standin, pki, tmp_path):
    server = standin([])
    server.state.misbehave["/apis"] = "many-groups"
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config")
    assert code == 2 and "6,001 API group versions" in err  # and the core group
    assert len(server.state.requests) < 10  # not one request per listed group


def test_server_text_masks_what_looks_like_credentials_and_is_bounded():
    from hcpscan.sources.live.client import MAX_SERVER_TEXT, server_text

    said = server_text("denied: Authorization: Bearer eyJhbGciOi.x.y; retry with token=abc123; the "
                       "continue token is too old " + "z" * 1000, ["s3cret-token"])
    assert "eyJhbGciOi" not in said and "abc123" not in said and "Bearer ****" in said
    assert "the continue token is too old" in said  # words about tokens are kept
    assert len(said) < MAX_SERVER_TEXT + 40 and "more characters" in said
    assert server_text("echo s3cret-token\nnext line", ["s3cret-token"]) == "echo **** next line"


def test_all_lists_together_have_a_byte_budget(standin, pki, tmp_path, example_bodies):
    """A server sending nearly a list's budget for every kind must not make hcpscan hold
    that much times the number of kinds: what all lists together hold is at most
    --max-total-size, whatever the number of lists."""
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    kinds = {"Secret", "Deployment", "ConfigMap", "Namespace", "Pod", "Service", "Proxy"}
    whole = _read(config, kinds, page_size=500)

    def wire(kind: str, read) -> int:  # the items' bytes as the stand-in serialises them
        return sum(len(json.dumps(o.body)) for o in read.objects if o.kind == kind)

    sizes = sorted(wire(k, whole) for k in kinds)
    # each list fits its own budget, but not all of them together
    total = sum(sizes) // 2
    read = _read(config, kinds, ListBudget(max_bytes=sizes[-1] * 2, max_total_bytes=total),
                 page_size=500)
    stopped = [d for d in read.diagnostics if "lists together brought more than" in d.message]
    assert stopped and all("--max-total-size" in d.hint for d in stopped)
    held = sum(wire(k, read) for k in kinds)  # a list that was ended keeps nothing
    assert 0 < held <= total


def test_a_list_that_ends_does_not_spend_the_total_of_the_others(standin, pki, tmp_path,
                                                               example_bodies):
    """A list ended (by its own budget, a cycle, an expired token) keeps nothing, so what
    it brought is no longer held: it counted against the total all the same, and every
    list read after it was ended too ('the lists together brought more than ...') though
    they fit; with lists read in parallel, which ones was a matter of timing."""
    from hcpscan.sources.live.lister import ListEnded, _Tally, list_all

    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    conn = connect(ClusterTarget(str(config), request_timeout=5))
    tally = _Tally()
    kept = len(json.dumps(list_all(conn, "/api/v1/namespaces", 2, tally=tally)))
    held = tally.add(0)
    assert held >= kept
    with pytest.raises(ListEnded):
        list_all(conn, SECRETS, 2, budget=ListBudget(max_bytes=3000), tally=tally)
    assert tally.add(0) == held  # the ended list's pages are not held
    server.state.misbehave[SECRETS] = "cyclic-continue"
    with pytest.raises(ListEnded):
        list_all(conn, SECRETS, 2, tally=tally)
    assert tally.add(0) == held
    server.state.misbehave.clear()
    clean = _Tally()
    list_all(conn, SECRETS, 2, tally=clean)
    server.state.expire_continue.add("secrets")  # read again from the start after a 410
    assert list_all(conn, SECRETS, 2, tally=tally)
    assert tally.add(0) - held == clean.add(0)  # the pages before the 410 were dropped


def test_the_default_total_is_the_documented_one_not_a_multiple_of_a_list():
    from hcpscan.sources.live.lister import MAX_BYTES_PER_LIST, MAX_BYTES_TOTAL

    assert ListBudget(max_bytes=5).total_bytes == MAX_BYTES_TOTAL == 1 << 30
    assert MAX_BYTES_PER_LIST <= MAX_BYTES_TOTAL  # one list alone cannot pass the total


def test_max_total_size_ends_lists_from_the_command_line(standin, pki, tmp_path, example_bodies):
    server = standin(example_bodies)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format", "json",
                             "--max-total-size", "0.02")
    assert code in (0, 1, 3), err
    said = [d for d in json.loads(out)["diagnostics"] if "lists together brought more than" in d["message"]]
    assert said and "--max-total-size" in said[0]["hint"], out[:3000]
    for bad in ("0", "inf", "nan", "-1"):
        code, _, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config",
                               "--max-total-size", bad)
        assert code == 2 and "--max-total-size must be" in err, (bad, err)


@pytest.mark.parametrize("scheme", ["http", "socks5"])
def test_an_unreachable_proxy_is_said_in_words(pki, tmp_path, scheme):
    """Through a proxy that refuses, the message showed urllib3's tuples and class names
    ("('Unable to connect to proxy', NewConnectionError(\"DeadlineHTTPSConnection(...")."""
    from tests.live.apiserver import unused_port

    config = write_kubeconfig(tmp_path / "kubeconfig", f"https://127.0.0.1:{unused_port()}", pki.ca_pem,
                              proxy_url=f"{scheme}://scanner:Pr0xyPass@127.0.0.1:{unused_port()}")
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2")
    assert code == 2 and "the connection was refused" in err, err
    assert "Connection(" not in err and "Error" not in err and "Pr0xyPass" not in err


def test_a_proxy_url_parse_error_does_not_quote_the_password(pki, tmp_path):
    """A raw '/' in the password makes the URL parser quote 'user:password-start' as the
    host; the error showed that part of the password."""
    config = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:6443", pki.ca_pem,
                              proxy_url="http://scanner:Pr0xyPass/rest@127.0.0.1:3128")
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--request-timeout", "2")
    assert code == 2 and "Pr0xyPass" not in err and "rest" not in err.replace("--request", ""), err


def test_a_server_that_lists_v1_but_serves_it_not_is_exit_2(standin, pki, tmp_path):
    """/api says v1, /api/v1 answers 404: every kind was "not served", every rule not
    applicable, and the scan passed (exit 0) having read nothing."""
    server = standin([], resources=[])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config")
    assert code == 2 and "does not serve it (404 Not Found)" in err, err


def test_a_core_api_serving_no_built_in_kind_is_exit_2(standin, pki, tmp_path):
    """/api/v1 answers a resource list without Pods, Services, ConfigMaps or Secrets (a
    front end's empty answer): every rule was 'not applicable' and the scan passed
    (exit 0) having read nothing."""
    from tests.live.apiserver import catalog

    server = standin([], resources=[r for r in catalog() if r.kind == "Namespace"])
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config")
    assert code == 2 and "serves none of the core kinds" in err, err


def test_built_in_lists_answered_404_are_errors_not_kinds_not_served(standin, pki, tmp_path,
                                                                     example_bodies):
    """A front end answering 404 to every list: built-in kinds cannot stop being served,
    so the scan must not pass as though the cluster held none of them."""
    from tests.live.apiserver import catalog

    server = standin(example_bodies)
    for r in catalog():
        path = f"/api/{r.version}/{r.plural}" if not r.group else f"/apis/{r.group}/{r.version}/{r.plural}"
        server.state.faults[path] = Fault(404, 10**6)
    config = write_kubeconfig(tmp_path / "kubeconfig", server.url, pki.ca_pem)
    code, out, err = hcpscan("cluster", "--kubeconfig", str(config), "--no-config", "--format", "json")
    assert code == 2, err
    report = json.loads(out)
    assert any("listing secrets failed: 404" in d["message"] for d in report["diagnostics"])
