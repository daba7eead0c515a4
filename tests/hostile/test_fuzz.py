"""Property-based fuzzing of the loaders and of every command's model building.

Documents of every kind hcpscan reads (one of each from the bundled fixtures),
with fields replaced by values of the wrong type, huge ones, or removed, are
written to a file, loaded, and given to what `inventory`, `proxy`,
`connectivity` and `scan` build: each must end in results or diagnostics, never
an exception (exit 4) or a check that failed. Raw text is fed to the parser.
The number of examples is bounded for CI (``HCPSCAN_FUZZ_EXAMPLES`` raises it);
inputs that once failed are kept in ``corpus/`` and replayed on every run.
"""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hcpscan.inventory import Inventory
from hcpscan.inventory.objects import HCPSCAN_API, K8sObject
from hcpscan.sources.documents import parse_entry
from hcpscan.sources.interface import Entry
from hcpscan.sources.loader import load_paths
from tests.conftest import FIXTURES
from tests.hostile.models import FORMATS, build_every_model

EXAMPLES = int(os.environ.get("HCPSCAN_FUZZ_EXAMPLES", "200"))
CORPUS = Path(__file__).parent / "corpus"
DELETE = object()
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@functools.cache
def seeds() -> tuple[K8sObject, ...]:
    """The first object of each kind in the fixtures, and a few around it to relate to."""
    found: dict[str, K8sObject] = {}
    for folder in ("example", "proxy", "reachability", "rules", "fuzz-kinds"):
        for obj in load_paths([str(FIXTURES / folder)]).objects:
            if obj.api_version != HCPSCAN_API:
                found.setdefault(obj.kind, obj)
    return tuple(found[kind] for kind in sorted(found))


def _context() -> list[K8sObject]:
    return [o for o in seeds() if o.kind in ("Namespace", "Service", "HostedCluster", "Proxy",
                                             "NetworkAttachmentDefinition")]


VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False), st.text(max_size=12), st.just("x" * 20_000),
    st.just("http://u:p@[::1]}:x"), st.just("*"), st.just("0.0.0.0/0"),
    # userinfo shapes of issue 22: a user name holding '@', an empty one, NFKC hosts
    st.just("http://jdoe@corp.example.com:PW@proxy:3128"),
    st.just("http://:PW@ｐｒｏｘｙ：３１２８"),
    st.just("jdoe@corp:P@W@１０.０.０.５:3128"),
    st.lists(st.one_of(st.integers(), st.text(max_size=4)), max_size=3),
    st.dictionaries(st.text(max_size=4), st.one_of(st.integers(), st.text(max_size=4)), max_size=2),
    st.just(DELETE),
)


def _paths(body: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    items = body.items() if isinstance(body, dict) else enumerate(body) if isinstance(body, list) else ()
    for key, value in items:
        out.extend(_paths(value, (*prefix, key)))
    return out


def _mutated(body: dict[str, Any], changes: list[tuple[int, Any]]) -> dict[str, Any]:
    body = copy.deepcopy(body)
    for choice, value in changes:
        paths = [p for p in _paths(body) if p[0] not in ("apiVersion", "kind")]
        if not paths:
            break
        *parents, last = paths[choice % len(paths)]
        parent = body
        for step in parents:
            parent = parent[step]
        if value is DELETE:
            del parent[last]
        else:
            parent[last] = copy.deepcopy(value)
    return body


@SETTINGS
@given(seed=st.integers(min_value=0), changes=st.lists(st.tuples(st.integers(min_value=0), VALUES),
                                                       min_size=1, max_size=4),
       as_json=st.booleans())
def test_wrongly_typed_documents_of_every_kind(tmp_path_factory, seed: int,
                                               changes: list[tuple[int, Any]], as_json: bool) -> None:
    obj = seeds()[seed % len(seeds())]
    body = _mutated(obj.body, changes)
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / ("object.json" if as_json else "object.yaml")
    path.write_text(yaml.safe_dump(body, default_flow_style=as_json, width=10**6))
    loaded = load_paths([str(path)])
    build_every_model(Inventory([*loaded.objects, *_context()], loaded.diagnostics))


@SETTINGS
@given(text=st.text(alphabet=st.sampled_from(list("{}[]-:,'\"!&*#|>?% \n\t\\abck0129.xe")), max_size=300))
def test_the_parser_on_any_text(text: str) -> None:
    entry = Entry("fuzz.yaml", ("fuzz.yaml",), lambda: b"", None, "fuzz.yaml")
    parse_entry(entry, "management", text.encode())


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.iterdir()))
def test_inputs_that_once_failed(name: str) -> None:
    loaded = load_paths([str(CORPUS / name)])
    inventory = Inventory([*loaded.objects, *_context()], loaded.diagnostics)
    build_every_model(inventory, FORMATS)


class _PagingServer:
    """A connection whose list answers follow a drawn chain of continue tokens (repeats,
    cycles of any length, an end or none): what a hostile or broken API server sends."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.asked = tokens, 0

    def get_sized(self, path: str, query: dict[str, Any]) -> tuple[dict[str, Any], int]:
        self.asked += 1
        token = query.get("continue", "")
        index = 0 if not token else self.tokens.index(token) + 1
        following = self.tokens[index] if index < len(self.tokens) else ""
        return {"items": [{"metadata": {"name": f"n{self.asked}"}}],
                "metadata": {"continue": following}}, 100


@SETTINGS
@given(tokens=st.lists(st.sampled_from(["A", "B", "C", "D", "E"]), max_size=12))
def test_paging_ends_whatever_continue_tokens_the_server_sends(tokens: list[str]) -> None:
    from hcpscan.sources.live.lister import ListEnded, list_all

    server = _PagingServer(tokens)
    try:
        items = list_all(server, "/api/v1/secrets", 1)  # type: ignore[arg-type]
    except ListEnded as exc:
        assert "circle" in exc.message  # only a repeated token ends a list this short
        first_repeat = next(i for i, t in enumerate(tokens) if t in tokens[:i])
        assert server.asked == first_repeat + 1  # ended on the first page that repeats
    else:
        assert len(set(tokens)) == len(tokens) and len(items) == len(tokens) + 1


RULE_SHAPES = st.sampled_from([
    "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10)),
    "deep: " + "[" * 5000 + "]" * 5000 + "\n",
    "id: FUZZ001\n",
    "check: {template: cel, params: {expression: '" + "(" * 300 + "true" + ")" * 300 + "'}}\n",
    "check: {template: cel, params: {expression: 'objects.all(a, objects.all(b, objects.all(c, "
    "objects.all(d, true))))', reads: [ConfigMap]}}\n",
    "message: \"{object} \\udc80\"\n", "severity: [low]\n", "title: !!python/object:os.system x\n",
])


# each bomb is counted to the 5,000,000-node budget (about a second): fewer examples
@settings(SETTINGS, max_examples=max(1, EXAMPLES // 8))
@given(parts=st.lists(RULE_SHAPES, min_size=1, max_size=4))
def test_rule_files_end_in_a_rule_or_a_rule_file_error(tmp_path_factory, parts: list[str]) -> None:
    from hcpscan.rules.loader import RuleFileError, load_rule_file

    path = tmp_path_factory.mktemp("rules") / "FUZZ001.yaml"
    path.write_text("".join(parts))
    try:
        load_rule_file(path)
    except RuleFileError:
        pass
