"""systemd expands specifiers in every Environment= word (load-fragment.c config_parse_environ,
unit_env_printf over unit-printf.c's table): '%%' is '%', the unit-name ones are known from
the unit's name, the host's are not, and an unknown one drops the assignment."""

from __future__ import annotations

from hcpscan.sources.systemd import dropin_unit, parse_unit


def _unit(line: str, name: str = "containerd.service"):  # type: ignore[no-untyped-def]
    return parse_unit(f"[Service]\n{line}\n", name)


def test_a_doubled_percent_is_one_percent() -> None:
    unit = _unit('Environment="HTTPS_PROXY=http://u:p%%40ss@10.0.0.1:8080"')
    assert unit.environment["HTTPS_PROXY"] == ("http://u:p%40ss@10.0.0.1:8080", 2)
    assert unit.problems == [] and unit.unknown == {}


def test_an_unknown_specifier_drops_the_assignment_and_says_where() -> None:
    unit = _unit('Environment="HTTPS_PROXY=http://u:p%40ss@10.0.0.1:8080" "NO_PROXY=.svc"')
    assert "HTTPS_PROXY" not in unit.environment
    assert unit.environment["NO_PROXY"] == (".svc", 2)
    ((line, why),) = unit.problems
    assert line == 2 and "%4 is no systemd specifier" in why and "'%%'" in why


def test_name_specifiers_resolve_and_host_ones_leave_the_value_unknown() -> None:
    unit = _unit("Environment=A=%n B=%N C=%p.%i D=%H E=100%")
    assert {k: v for k, (v, _) in unit.environment.items() if k in "ABCE"} == {
        "A": "containerd.service", "B": "containerd", "C": "containerd.", "E": "100%"}
    assert set(unit.unknown) == {"D"} and "%H" in unit.unknown["D"]
    # without the unit's name, %n is as unknown as the host name
    assert "A" in _unit("Environment=A=%n", "").unknown
    # a later known assignment of the variable replaces the unknown one
    assert "D" not in _unit("Environment=D=%H\nEnvironment=D=x").unknown
    assert _unit("Environment=X=%i", "getty@tty1.service").environment["X"][0] == "tty1"


def test_the_unit_a_drop_in_directory_names() -> None:
    assert dropin_unit("/etc/systemd/system/containerd.service.d/p.conf") == "containerd.service"
    assert dropin_unit("/etc/systemd/system/service.d/p.conf") == ""
    assert dropin_unit("/etc/systemd/system/a-.service.d/p.conf") == ""
    assert dropin_unit("/etc/systemd/system/getty@.service.d/p.conf") == ""


def test_prx013_tells_a_drop_in_to_double_the_percent(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import FIXTURES
    from tests.rules.harness import scan

    good = FIXTURES / "rules" / "PRX013" / "pass" / "kubeadm-dropin-percent-specifier.yaml"
    assert [f for f in scan([good], ["PRX013"]).findings] == []  # %%40 is %40: a valid URL
    (tmp_path / "c.yaml").write_text(good.read_text().replace("p%%40ss", "p%%4ss"))
    found = [f.message for f in scan([tmp_path], ["PRX013"]).findings]
    assert found and all("write a literal '%' as %25 (in a systemd drop-in each '%' is "
                         "written '%%': %25 as %%25)" in m for m in found)
