"""Exact text edits: only the changed scalar or the inserted lines differ, everything else
of the file stays byte for byte; an edit that cannot be made exactly is refused."""

from __future__ import annotations

import difflib

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hcpscan.findings.fix import AddDocument, AppendEntries, AppendItems, SetField
from hcpscan.fixes.textedit import EditError, edit_text

POLICY = """\
# egress of the payments team
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-dns, namespace: payments}   # keep me
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to:
    - namespaceSelector:
        matchLabels: {kubernetes.io/metadata.name: openshift-dns}
    ports:
    - {port: 5353, protocol: UDP}   # the DNS pods

  - to: [{ipBlock: {cidr: 10.40.0.0/16}}]
    ports: [{port: 5432, protocol: TCP}]
"""


def _changes(before: str, after: str) -> list[tuple[str, list[str], list[str]]]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    return [(tag, a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in
            difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal"]


def test_item_added_to_a_block_list_in_its_flow_style_after_the_last_item():
    after = edit_text(POLICY, 0, None, (AppendItems(("spec", "egress", 0, "ports"),
                                                    ({"port": 5353, "protocol": "TCP"},)),))
    assert _changes(POLICY, after) == [
        ("insert", [], ["    - {port: 5353, protocol: TCP}\n"])]
    assert after.index("# the DNS pods") < after.index("protocol: TCP}")


def test_item_added_to_a_flow_list_inside_the_line():
    after = edit_text(POLICY, 0, None, (AppendItems(("spec", "egress", 1, "ports"),
                                                    ({"port": 6432, "protocol": "TCP"},)),))
    assert _changes(POLICY, after) == [(
        "replace", ["    ports: [{port: 5432, protocol: TCP}]\n"],
        ["    ports: [{port: 5432, protocol: TCP}, {port: 6432, protocol: TCP}]\n"])]


def test_block_mapping_items_are_written_as_block_mappings_at_the_list_indent():
    text = "spec:\n  env:\n    - name: A\n      value: a\n"
    after = edit_text(text, 0, None, (AppendItems(("spec", "env"), ({"name": "B", "value": "b"},)),))
    assert after == text + "    - name: B\n      value: b\n"


@pytest.mark.parametrize(("written", "expected"), [
    ('noProxy: "a,b"  # note\n', 'noProxy: "a,b,c"  # note\n'),
    ("noProxy: 'a,b'\n", "noProxy: 'a,b,c'\n"),
    ("noProxy: a,b\n", "noProxy: a,b,c\n"),
    ("noProxy: a,b,\n", "noProxy: a,b,c\n"),
    ("noProxy: ''\n", "noProxy: 'c'\n"),
])
def test_noproxy_entries_keep_the_quoting_and_the_comment(written, expected):
    text = "kind: Proxy\nspec:\n  " + written
    after = edit_text(text, 0, None, (AppendEntries(("spec", "noProxy"), ("c",)),))
    assert after == "kind: Proxy\nspec:\n  " + expected


def test_noproxy_as_a_yaml_list_gets_items():
    text = "spec:\n  noProxy:\n  - a\n  - b\n"
    after = edit_text(text, 0, None, (AppendEntries(("spec", "noProxy"), ("b", "c")),))
    assert after == text + "  - c\n"


def test_a_missing_key_is_added_after_the_last_key_of_its_mapping():
    text = "spec:\n  proxyConfig:\n    httpsProxy: http://p:3128\n  other: 1\n"
    after = edit_text(text, 0, None, (AppendEntries(("spec", "proxyConfig", "noProxy"),
                                                    ("172.30.0.1",)),))
    assert after == ("spec:\n  proxyConfig:\n    httpsProxy: http://p:3128\n"
                     "    noProxy: 172.30.0.1\n  other: 1\n")


def test_entries_already_present_change_nothing():
    text = "spec:\n  noProxy: a,b\n"
    assert edit_text(text, 0, None, (AppendEntries(("spec", "noProxy"), ("b",)),)) == text


def test_a_value_that_needs_quotes_gets_them():
    text = "spec:\n  noProxy: a\n"
    after = edit_text(text, 0, None, (SetField(("spec", "noProxy"), "a, #b"),))
    assert yaml.safe_load(after) == {"spec": {"noProxy": "a, #b"}}


def test_a_plain_value_in_a_flow_mapping_stays_valid():
    text = "spec: {noProxy: a}\n"
    after = edit_text(text, 0, None, (AppendEntries(("spec", "noProxy"), ("b",)),))
    assert yaml.safe_load(after) == {"spec": {"noProxy": "a,b"}}
    assert after.startswith("spec: {noProxy: ")


def test_the_right_document_and_list_item_are_edited():
    text = ("a: 1\n---\nkind: List\nitems:\n- kind: X\n  spec: {v: [1]}\n"
            "- kind: Y\n  spec: {v: [1]}\n")
    after = edit_text(text, 1, 1, (AppendItems(("spec", "v"), (2,)),))
    assert list(yaml.safe_load_all(after))[1]["items"] == [
        {"kind": "X", "spec": {"v": [1]}}, {"kind": "Y", "spec": {"v": [1, 2]}}]


def test_a_new_document_is_appended_even_without_a_final_newline():
    after = edit_text("a: 1", 0, None, (AddDocument({"kind": "NetworkPolicy"}),))
    assert list(yaml.safe_load_all(after)) == [{"a": 1}, {"kind": "NetworkPolicy"}]
    assert after.startswith("a: 1\n---\n")


@pytest.mark.parametrize(("text", "edit"), [
    ("spec:\n  noProxy: >\n    a,b\n", AppendEntries(("spec", "noProxy"), ("c",))),
    ("spec:\n  noProxy: |+\n    a,b\n\n", AppendEntries(("spec", "noProxy"), ("c",))),
    ("spec:\n  doc: |2\n     a\n", SetField(("spec", "doc"), "b\n")),
    ("spec:\n  doc: |\n    a\n", SetField(("spec", "doc"), " leading space\n")),
    ("spec:\r\n  noProxy: a\r\n", AppendEntries(("spec", "noProxy"), ("c",))),
    ("spec:\n  noProxy: {a: 1}\n", AppendEntries(("spec", "noProxy"), ("c",))),
    ("spec: [1]\n", AppendItems(("spec", "x", "y"), (1,))),
    ("spec: {a: [}\n", AppendItems(("spec", "a"), (1,))),
])
def test_edits_that_cannot_be_made_exactly_are_refused(text, edit):
    with pytest.raises(EditError):
        edit_text(text, 0, None, (edit,))


def test_a_literal_block_is_written_again_line_for_line_keeping_its_header_comment():
    text = ("data:\n  kubeconfig: |  # pasted from the hub\n    apiVersion: v1\n"
            "    clusters:\n\n    - name: hub\n      cluster: {ca: AAA}\n\n  other: x\n")
    inner = yaml.safe_load(text)["data"]["kubeconfig"].replace("AAA", "AAABBB")
    after = edit_text(text, 0, None, (SetField(("data", "kubeconfig"), inner),))
    assert _changes(text, after) == [("replace", ["      cluster: {ca: AAA}\n"],
                                      ["      cluster: {ca: AAABBB}\n"])]
    stripped = edit_text(text, 0, None, (SetField(("data", "kubeconfig"), "x: 1"),))
    assert stripped.splitlines()[1] == "  kubeconfig: |-  # pasted from the hub"
    assert yaml.safe_load(stripped)["data"] == {"kubeconfig": "x: 1", "other": "x"}


def test_offsets_are_characters_after_non_ascii_text():
    text = 'metadata: {name: ünïcødé, note: "日本語"}\nspec:\n  noProxy: a,b  # ü\n'
    after = edit_text(text, 0, None, (AppendEntries(("spec", "noProxy"), ("c",)),))
    assert after == text.replace("a,b  #", "a,b,c  #")


def test_a_list_item_is_edited_in_its_own_lines():
    from hcpscan.fixes.textedit import edit_document

    text = ("apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n  data:\n    no_proxy: a\n"
            "- kind: ConfigMap\n  data:\n    no_proxy: a\n")
    after = edit_document(text, 0, 1, (AppendEntries(("data", "no_proxy"), ("b",)),), (7, 3))
    assert after == text[:text.rindex("a\n")] + "a,b\n"


PERIMETER = """\
kind: Perimeter
default: deny
rules:
# the admins first
- name: admins
  action: allow
  sources: [192.168.50.0/24]   # VPN
- {name: deny-all, action: deny, sources: [0.0.0.0/0]}
"""


def test_items_put_first_go_before_the_first_item_in_its_style():
    rule = {"name": "workers", "action": "allow", "sources": ["10.0.0.0/24"]}
    out = edit_text(PERIMETER, 0, None, (AppendItems(("rules",), (rule,), first=True),))
    assert out == PERIMETER.replace(
        "- name: admins\n",
        "- name: workers\n  action: allow\n  sources:\n  - 10.0.0.0/24\n- name: admins\n")
    assert yaml.safe_load(out)["rules"][0] == rule
    flow = "rules: [a, b]   # keep\n"
    assert edit_text(flow, 0, None, (AppendItems(("rules",), ("z",), first=True),)) == \
        "rules: [z, a, b]   # keep\n"
    # an empty or absent list is created as a plain append would
    assert yaml.safe_load(edit_text("rules: []\n", 0, None,
                                    (AppendItems(("rules",), ("z",), first=True),))) == \
        {"rules": ["z"]}


def _line_start_by_finding(text: str, line: int) -> int | None:
    """Where line ``line`` starts, as defined: one line break found after another."""
    first = 0
    for _ in range(line - 1):
        first = text.find("\n", first) + 1
        if first == 0:
            return None
    return first


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=" -:ab#\t", max_size=6), max_size=12), st.booleans(),
       st.integers(-1, 16))
def test_a_line_is_found_where_its_line_breaks_put_it(lines, trailing, line):
    """A fix's List item is cut out from the line its mapping starts on: the offset of that
    line (split in C) is the one counting line breaks gives, past the end included."""
    from hcpscan.fixes.textedit import _line_start

    text = "\n".join(lines) + ("\n" if trailing else "")
    assert _line_start(text, line) == _line_start_by_finding(text, line)
