"""hcpscan reads every object a YAML parser reads, document by document, on every real input.

For each YAML/JSON file (archive members included) of every folder under
``../shared/realworld/``, PyYAML's reading is the reference: for each document
it reads, hcpscan must find as many Kubernetes objects (a mapping with a
``kind``, or the entries of a ``List``) in that same document. Where PyYAML
stops at a bad document, hcpscan must still have every document before it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from hcpscan.core.diagnostics import SkipRecord
from hcpscan.sources.documents import MANIFEST_SUFFIXES, parse_entry
from hcpscan.sources.walk import iter_entries
from tests.conftest import SHARED, require

REALWORLD = SHARED / "realworld"
FOLDERS = sorted(p.name for p in REALWORLD.iterdir() if p.is_dir()) if REALWORLD.is_dir() else []
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _objects_in(body: Any) -> int:
    """Kubernetes objects a document holds, as a reader of manifests counts them."""
    if not isinstance(body, dict) or not isinstance(body.get("kind"), str) or not body["kind"]:
        return 0
    if body["kind"].endswith("List") and "items" in body:
        items = body["items"]  # `items: null` is an empty list, as kubectl writes it
        return sum(1 for item in items if isinstance(item, dict)) if isinstance(items, list) else 0
    return 1


def _pyyaml_counts(text: str) -> tuple[dict[int, int], bool]:
    """Objects per document index, and whether PyYAML read the whole stream."""
    counts: dict[int, int] = {}
    try:
        for index, body in enumerate(yaml.load_all(text, Loader=Loader)):
            counts[index] = _objects_in(body)
    except (yaml.YAMLError, ValueError, TypeError):
        return counts, False
    return counts, True


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_document_pyyaml_reads_is_read(folder):
    compared = documents = 0
    for entry in iter_entries(str(REALWORLD / folder), lambda d: None, SkipRecord()):
        if not entry.parts[-1].endswith(MANIFEST_SUFFIXES):
            continue
        data = entry.read()
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            continue
        expected, whole = _pyyaml_counts(text)
        parsed = parse_entry(entry, "management", data)
        found = Counter(obj.source.doc_index for obj in parsed.objects)
        for index, count in expected.items():
            assert found[index] == count, (entry.display, index)
        if whole:  # nothing beyond what PyYAML read
            assert sum(found.values()) == sum(expected.values()), entry.display
        compared += 1
        documents += len(expected)
    assert compared and documents >= compared


def test_the_openshift_monitoring_configmaps_are_read():
    """The 34 ConfigMaps whose Prometheus templates once discarded their file."""
    path = Path(REALWORLD / "must-gather-aws")
    require(path.is_dir(), f"the real must-gather {path}")
    from hcpscan.sources.loader import load_paths

    objects = load_paths([str(path)]).objects
    monitoring = [o for o in objects if o.kind == "ConfigMap" and o.namespace == "openshift-monitoring"]
    assert len(monitoring) == 34
    assert any("{{" in str(o.body.get("data")) for o in monitoring)
