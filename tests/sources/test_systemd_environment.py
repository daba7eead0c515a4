"""``Environment=`` split as systemd splits it (``config_parse_environ`` over
``extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE)``): what a unit really assigns."""

from __future__ import annotations

import pytest

from hcpscan.sources.systemd import parse_unit, tries_proxy


def _env(line: str) -> dict[str, str]:
    return {k: v for k, (v, _) in parse_unit(f"[Service]\n{line}\n").environment.items()}


@pytest.mark.parametrize(("line", "assigned"), [
    ('Environment="HTTP_PROXY=http://p:3128"', {"HTTP_PROXY": "http://p:3128"}),
    ("Environment='A=x y' B=2", {"A": "x y", "B": "2"}),
    ('Environment=A="x"y', {"A": "xy"}),  # quotes anywhere in a word, as a shell
    (r"Environment=A=\x41\u00e9\s.", {"A": "Aé ."}),  # C escapes
    # the closing typographic quote is a character; the ASCII " after the URL opens a quote
    # that never closes: the whole line is ignored
    ('Environment=\u201dHTTP_PROXY=http://p:3128"', {}),
    # the words before a syntax error stay assigned
    ('Environment=A=1 "B=2', {"A": "1"}),
    (r"Environment=A=1 B=\q C=3", {"A": "1"}),
    # typographic quotes on both sides: a word whose name is invalid, ignored alone
    ("Environment=\u201cHTTP_PROXY=http://p:3128\u201d C=3", {"C": "3"}),
    ("Environment=A=1 noequals C=3", {"A": "1", "C": "3"}),
])
def test_environment_assigns_what_systemd_assigns(line, assigned):
    assert _env(line) == assigned


def test_an_ignored_proxy_line_is_reported_with_its_line_and_text():
    unit = parse_unit('[Service]\nEnvironment="NO_PROXY=.svc"\n'
                      'Environment=\u201dHTTPS_PROXY=http://p:3128"\n')
    [(line, why)] = unit.problems
    assert line == 3 and "HTTPS_PROXY=http://p:3128" in why and "never closed" in why
    assert "typographic" in why and tries_proxy(why)
    assert not tries_proxy("Environment= assignment 'NO_PROXY=.svc' ...")


def test_an_empty_assignment_resets_what_came_before():
    unit = parse_unit('[Service]\nEnvironment="A=1"\nEnvironment=\nEnvironment="B=2"\n')
    assert unit.resets and {k: v for k, (v, _) in unit.environment.items()} == {"B": "2"}


def test_login_scripts_export_what_kubeadm_687_users_wrote():
    from hcpscan.sources.systemd import is_login_script, parse_shell_exports

    text = ('# proxy for people logged in\n'
            'export http_proxy="http://192.168.42.214:3128"\n'
            "export NO_PROXY='$http_proxy' HTTPS_PROXY=\"${http_proxy}\"\n"
            'FTP_PROXY=ftp://p:21\n'
            'LOCAL=1\nexport LOCAL\n'
            'http_proxy=http://other:3128 curl https://example.com\n'
            'if [ -n "$X" ]; then echo; fi\n')
    found = {k: v for k, (v, _line) in parse_shell_exports(text)[0].items()}
    # a single-quoted $ stays as written; FTP_PROXY is never exported; a prefix assignment
    # belongs to one command only
    assert found == {"http_proxy": "http://192.168.42.214:3128", "NO_PROXY": "$http_proxy",
                     "HTTPS_PROXY": "http://192.168.42.214:3128", "LOCAL": "1"}
    assert is_login_script("/etc/profile.d/proxy.sh") and is_login_script("/etc/bash.bashrc")
    assert not is_login_script("/etc/profile.d/proxy.csh")
    assert not is_login_script("/etc/profile.d/sub/x.sh")
