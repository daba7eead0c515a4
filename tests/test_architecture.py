"""The stages import one way, and no modules import each other in a ring.

Read from the source with ``ast``, so imports inside functions and under
``TYPE_CHECKING`` count as much as the ones at the top: a cycle hidden by a
local import is still a cycle. ``docs/architecture.md`` explains the order.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "hcpscan"

# Lower stages never import higher ones. Equal ranks may import each other
# (module cycles are checked separately).
RANKS = {
    "hcpscan": 0,  # the package's own __init__ (the version)
    "core": 0,  # diagnostics and the YAML parsers every stage reads with
    "collector": 0,  # keeping the garbage collector out of the way
    "inventory": 1,  # typed objects with their source locations
    "sources": 2,  # bytes -> inventory objects (files, dumps, archives, live API)
    "model": 3,  # what the objects mean in the domain, each fact defined once
    "analysis": 4,  # reachability, the path graph, the proxy model
    "findings": 5,  # what rules hand to reporters
    "rules": 6,  # the engine, the templates that judge, rule files
    "reporters": 7,  # findings -> text
    "fixes": 7,  # a finding's remedy -> exact text edits of the user's files
    "scan": 8,  # one scan, stage by stage
    "publish": 8,  # the one write hcpscan makes
    "fleet": 8,  # the fleet's feedback contract and the hub's matrix (issue 28)
    "cli": 9,  # wires the stages together
    "__main__": 10,
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(modules: dict[str, Path]) -> list[tuple[str, str, int]]:
    """(importer, imported module, line) for every hcpscan import, wherever it is."""
    out = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    target = full if full in modules else node.module
                    if target in modules:
                        out.append((name, target, node.lineno))
            elif isinstance(node, ast.Import):
                out.extend((name, alias.name, node.lineno) for alias in node.names if alias.name in modules)
    return out


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_stage_has_a_rank():
    assert {_stage(m) for m in _modules()} <= set(RANKS), "give the new top-level module a rank here"


def test_no_stage_imports_a_higher_one():
    modules = _modules()
    backwards = [f"{modules[src].relative_to(PACKAGE.parent)}:{line}: {_stage(src)} imports {dst}"
                 for src, dst, line in _imports(modules)
                 if RANKS[_stage(src)] < RANKS[_stage(dst)]]
    assert not backwards, "imports that run against the pipeline:\n" + "\n".join(backwards)


def test_no_import_cycles_between_modules():
    modules = _modules()
    graph = nx.DiGraph()
    for src, dst, _ in _imports(modules):
        # a package's __init__ importing its own submodules (registries) is not a ring
        if not (dst.startswith(src + ".") or src.startswith(dst + ".")):
            graph.add_edge(src, dst)
    cycles = [" -> ".join([*cycle, cycle[0]]) for cycle in nx.simple_cycles(graph)]
    assert not cycles, "modules that import each other:\n" + "\n".join(cycles)


def test_the_reachability_arrows_in_docs_architecture_are_true():
    """docs/architecture.md's "They import one way: a, b ← c ← d" line: no module imports
    one in its own group or to its right, and each group right of the first imports from
    the group just left of it (an arrow the code does not draw is not written)."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = page.index("They import one way:") + len("They import one way:")
    line = page[start:].split("\n", 1)[0]
    groups = [[name.strip(" `") for name in part.split(",")] for part in line.split("←")]
    assert len(groups) >= 3 and all(all(group) for group in groups), line
    package = "hcpscan.analysis.reachability"
    modules = _modules()
    edges = {(src, dst) for src, dst, _ in _imports(modules)}
    for i, group in enumerate(groups):
        for name in group:
            assert f"{package}.{name}" in modules, name
            right = [m for g in groups[i:] for m in g]
            wrong = [m for m in right if (f"{package}.{name}", f"{package}.{m}") in edges]
            assert not wrong, f"{name} imports {wrong}, which the docs put at or right of it"
            if i:
                assert any((f"{package}.{name}", f"{package}.{m}") in edges for m in groups[i - 1]), \
                    f"the docs draw {groups[i - 1]} ← {name}, but {name} imports none of them"


# Modules of rules/templates/ that register no template, each a part of the ones that do.
# Model work does not belong here (it goes to analysis/ or model/, reached through ctx).
TEMPLATE_PARTS = {
    "base": "the Template base class and its outcomes",
    "reach_out": "the reach template's out direction (reach.py registers `reach`)",
}


def test_every_module_of_rules_templates_is_a_template():
    from hcpscan.rules.templates import TEMPLATES

    folder = PACKAGE / "rules" / "templates"
    registering = {type(t).__module__.rsplit(".", 1)[1] for t in TEMPLATES.values()}
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    assert modules - registering == set(TEMPLATE_PARTS), (
        "a module of rules/templates/ that registers no template: move model work to "
        "analysis/ or model/ (docs/architecture.md)")


def test_each_template_lives_in_the_module_named_after_it():
    """One module per template, named after it (`reach` in reach.py, `required-flow` in
    required_flow.py): a newcomer finds the code of a rule's `template:` by its name."""
    from hcpscan.rules.templates import TEMPLATES

    misplaced = {name: type(t).__module__ for name, t in TEMPLATES.items()
                 if type(t).__module__.rsplit(".", 1)[1] != name.replace("-", "_")}
    assert not misplaced, misplaced
