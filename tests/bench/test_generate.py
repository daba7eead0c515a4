"""The benchmark generator refuses to run without its real template."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import ROOT


def _generate():
    spec = importlib.util.spec_from_file_location("bench_generate", ROOT / "bench" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_template_stops_the_generator_with_a_clear_message(tmp_path, monkeypatch, capsys):
    generate = _generate()
    monkeypatch.setattr(generate, "TEMPLATE", tmp_path / "nowhere")
    monkeypatch.setattr(sys, "argv", ["generate.py"])
    with pytest.raises(SystemExit) as info:
        generate.main(["mgmt", "--clusters", "1", "--out", str(tmp_path / "out")])
    assert "cpo-rendered" in str(info.value.code) and "missing" in str(info.value.code)
    assert not (tmp_path / "out" / "mgmt-1").exists()


def test_an_empty_template_folder_is_refused_too(tmp_path):
    generate = _generate()
    (tmp_path / "empty").mkdir()
    with pytest.raises(generate.TemplateMissing):
        generate._load_template(tmp_path / "empty")
