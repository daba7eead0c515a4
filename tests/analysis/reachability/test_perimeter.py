"""The perimeter file: format, errors with lines, first-match semantics."""

from __future__ import annotations

import pytest

from hcpscan.analysis.reachability.perimeter import PerimeterError, load_perimeter, parse_perimeter
from hcpscan.model.ipspace import IPSpace

from .conftest import FIXTURES

CHAIN = """\
kind: Perimeter
default: allow
rules:
- name: block-one-host
  action: deny
  sources: [10.0.0.66/32]
- name: workers
  action: allow
  sources: [10.0.0.0/24]
  ports: [{protocol: TCP, port: 8443}]
- name: rest-of-tcp
  action: deny
  sources: [0.0.0.0/0]
  ports: [{protocol: TCP}]
"""


def test_first_matching_rule_decides():
    perimeter = parse_perimeter(CHAIN)
    host, worker = IPSpace.from_cidr("10.0.0.66/32"), IPSpace.from_cidr("10.0.0.7/32")
    outsider = IPSpace.from_cidr("203.0.113.1/32")
    assert not perimeter.decide(host, "TCP", 8443).allowed
    assert perimeter.decide(worker, "TCP", 8443).rule.name == "workers"
    assert not perimeter.decide(worker, "TCP", 22).allowed
    verdict = perimeter.decide(outsider, "UDP", 53)
    assert verdict.allowed and verdict.rule is None  # the default


def test_allowed_ports_follow_the_chain():
    perimeter = parse_perimeter(CHAIN)
    worker = perimeter.allowed(IPSpace.from_cidr("10.0.0.7/32"))
    assert str(worker) == "SCTP 1-65535,TCP 8443,UDP 1-65535"


def test_default_is_deny():
    perimeter = parse_perimeter("rules: []\n")
    assert not perimeter.decide(IPSpace.from_cidr("10.0.0.1/32"), "TCP", 80).allowed


@pytest.mark.parametrize("text, allowed", [("default: deny\n", False), ("default: allow\n", True),
                                           ("default: deny\nrules:\n", False)])
def test_a_perimeter_of_only_its_default_decides_everything(text, allowed):
    perimeter = parse_perimeter(text)
    assert perimeter.rules == ()
    assert perimeter.decide(IPSpace.from_cidr("203.0.113.9/32"), "TCP", 6443).allowed is allowed


def test_shipped_example_loads_with_rule_lines():
    perimeter = load_perimeter(FIXTURES / "perimeter-workers-only.yaml")
    assert perimeter.default == "deny"
    assert [r.line for r in perimeter.rules][:2] == [10, 21]


@pytest.mark.parametrize("text, message, line", [
    ("rules:\n- action: maybe\n  sources: [10.0.0.0/8]\n", "action must be allow or deny", 2),
    ("rules:\n- action: allow\n  sources: [10.0.0.1/8]\n", "has host bits set", 3),
    ("rules:\n- action: allow\n", "sources must list at least one CIDR", 2),
    ("rules:\n- action: allow\n  sources: [10.0.0.0/8]\n  ports: [{port: 70000}]\n",
     "1-65535", 4),
    ("rules: [\n", "not valid YAML", 2),
    ("- a\n", "expected a mapping", 1),
    ("default: sometimes\nrules: []\n", "default must be allow or deny", 1),
    ("default: deny\nrules: 5\n", "must be a list of rules", 2),
])
def test_bad_files_say_where_and_what(text, message, line):
    with pytest.raises(PerimeterError) as info:
        parse_perimeter(text, "fw.yaml")
    assert message in info.value.message
    assert info.value.line == line
    assert str(info.value).startswith(f"fw.yaml:{line}: ")


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(PerimeterError, match="cannot read the perimeter file"):
        load_perimeter(tmp_path / "nope.yaml")
