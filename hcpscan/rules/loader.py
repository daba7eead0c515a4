"""Load and validate rule files; a broken rule file is an error naming its file and line."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from hcpscan import RULE_PAGES_URL
from hcpscan.core.yamldocs import InputLimitError, YamlSyntaxError, locate, parse_documents
from hcpscan.findings.model import RuleDocs, RuleInfo, Severity
from hcpscan.inventory.fieldpath import mapping_at
from hcpscan.inventory.jsonpaths import compile_query
from hcpscan.rules.model import AppliesTo, Rule
from hcpscan.rules.schema import RULE_SCHEMA
from hcpscan.rules.templates import TEMPLATES, Template
from hcpscan.sources.bounded import read_bounded


@functools.cache
def _rule_validator() -> Any:
    import jsonschema  # only when a rule file is validated: never for the shipped catalog

    return jsonschema.Draft202012Validator(RULE_SCHEMA)


class RuleFileError(Exception):
    """A rule file that cannot be used; ``problems`` holds every (line, message) found,
    so a user fixes a file in one round rather than one error per run."""

    def __init__(self, path: str, line: int | None, message: str,
                 problems: list[tuple[int, str]] | None = None) -> None:
        self.problems = problems or [(line or 1, message)]
        self.path = path
        self.line = self.problems[0][0]
        self.message = self.problems[0][1] if len(self.problems) == 1 else "\n".join(
            f"{path}:{ln}: {msg}" for ln, msg in self.problems)
        super().__init__(f"{path}:{self.line}: {self.message}")


def builtin_rules_dir() -> Path:
    """hcpscan's own rule catalog, wherever this copy of hcpscan lives.

    In a source checkout (tests, editable installs) that is ``rules/`` beside the
    ``hcpscan`` package, recognised by the project's ``pyproject.toml``; installed
    from a wheel it is the ``hcpscan.catalog`` package. Never a folder found by a
    bare top-level name: a PyPI package called ``rules`` must not replace the catalog.
    """
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "rules" / "__init__.py").is_file():
        return checkout / "rules"
    import importlib.util

    spec = importlib.util.find_spec("hcpscan.catalog")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        if Path(folder).is_dir():  # installed as files (importlib.resources imports much more)
            return Path(folder)
    from importlib import resources  # inside a zip, say

    return Path(str(resources.files("hcpscan.catalog")))


def load_rule_dirs(dirs: list[Path]) -> list[Rule]:
    rules: dict[str, Rule] = {}
    builtin = builtin_rules_dir().resolve()
    for folder in dirs:
        if not folder.is_dir():
            raise RuleFileError(str(folder), None, "rule directory not found")
        for path in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")):
            shipped = folder.resolve() == builtin
            rule = load_rule_file(path, builtin=shipped, schema_checked=shipped)
            if rule.id in rules:
                raise RuleFileError(str(path), 1, f"rule id {rule.id} is already defined in "
                                                  f"{rules[rule.id].info.source}")
            rules[rule.id] = rule
    return sorted(rules.values(), key=lambda r: r.id)


def load_rule_file(path: Path, builtin: bool = False, schema_checked: bool = False) -> Rule:
    """A rule file, validated whole: every problem is reported at once, each at its line.
    Built-in rules must also carry their category and docs.

    ``schema_checked``: the file is hcpscan's own catalog, whose every file the tests
    validate against the rule schema and its template's parameters
    (tests/rules/test_catalog.py); a scan then skips that validation (and importing
    jsonschema) and the compiling of its JSONPath expressions and patterns ahead of use
    (building jsonpath-ng's parser alone costs ~50 ms of a one-file scan); the rest of
    the checks still run."""
    try:  # under the budgets of an input file: a rule file is input too
        text = read_bounded(path)
    except InputLimitError as exc:
        raise RuleFileError(str(path), exc.line, f"not read: {exc.message}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleFileError(str(path), None, f"cannot read rule file: {exc}") from None
    try:
        docs = list(parse_documents(text))
    except YamlSyntaxError as exc:
        raise RuleFileError(str(path), exc.line, f"invalid YAML: {exc.message}") from None
    if len(docs) != 1 or not isinstance(docs[0].body, dict):
        raise RuleFileError(str(path), 1, "a rule file holds exactly one YAML mapping")
    data = docs[0].body
    problems: list[tuple[tuple[Any, ...], str]] = []
    errors = () if schema_checked else _rule_validator().iter_errors(data)
    for err in sorted(errors, key=lambda e: list(e.absolute_path)):
        steps = tuple(err.absolute_path)
        problems.append((steps, f"{'.'.join(str(s) for s in steps) or '(top level)'}: {err.message}"))
    if builtin:
        problems += [((), f"a built-in rule needs '{key}'") for key in ("category", "docs")
                     if key not in data]
        if "needs" in data:  # derived from the kinds it reads (inventory/resources.py)
            problems.append((("needs",), "needs: a built-in rule names no resources; they follow "
                                         "from the kinds it reads (docs/rule-resources.md)"))
    check = mapping_at(data, "check")
    name = check.get("template", check.get("primitive"))
    template = TEMPLATES.get(name) if isinstance(name, str) else None
    if isinstance(name, str) and template is None:
        key = "template" if "template" in check else "primitive"
        problems.append((("check", key), f"unknown check template {name!r} (known: "
                                         f"{', '.join(sorted(TEMPLATES))}; see `hcpscan templates list`)"))
    if not schema_checked:  # the catalog's are compiled by its test, and when first used
        problems += _expression_errors(data)
    params = check.get("params", {})
    if template is not None and isinstance(params, dict) and not schema_checked:
        problems += [(("check", "params", *steps),
                      f"{'.'.join(map(str, ('check.params', *steps)))}: {message}")
                     for steps, message in template.problems(params)]
        if "applies_to" not in data and not template.subject_kinds:
            problems.append(((), f"applies_to.kinds is needed: template {name} judges any kind"))
    if problems:
        located = []
        for steps, message in problems:
            where = locate(text, 0, None, steps) if steps else None
            located.append((where[0] if where else 1, message))
        raise RuleFileError(str(path), None, "", problems=sorted(located))
    if template is None:  # the schema requires check.template; kept explicit for a caller that skipped it
        raise RuleFileError(str(path), None, "",
                            problems=[(1, "check.template: the template to run is missing")])
    return _build(path, data, template, builtin)


def _autofix(declared: dict[str, Any] | None) -> dict[str, str]:
    if not declared:
        return {}
    return {"autofix": "offered" if declared["offered"] else "none",
            "autofix_why": declared.get("why", "").strip()}


def _build(path: Path, data: dict[str, Any], template: Template, builtin: bool = False) -> Rule:
    docs = data.get("docs", {})
    info = RuleInfo(
        id=data["id"], title=data["title"], severity=Severity(data["severity"]),
        category=data.get("category", "custom"),
        docs=RuleDocs(what=docs.get("what", ""), why=docs.get("why", ""),
                      failing=docs.get("failing", ""), passing=docs.get("passing", ""),
                      fix=docs.get("fix", ""), known_problems=docs.get("known_problems", ""),
                      references=tuple(docs.get("references", ())),
                      **_autofix(docs.get("autofix"))),
        tags=tuple(data.get("tags", ())), precision=data.get("precision", "high"), source=str(path),
        help_uri=f"{RULE_PAGES_URL}/{data['id']}.md" if builtin else "")
    applies = data.get("applies_to", {})
    return Rule(
        info=info,
        applies_to=AppliesTo(
            kinds=tuple(applies.get("kinds", template.subject_kinds)),
            api_versions=tuple(applies.get("api_versions", ())),
            namespaces=tuple(applies.get("namespaces", ())), names=tuple(applies.get("names", ())),
            labels=tuple(sorted(applies.get("labels", {}).items())), where=applies.get("where"),
            clusters=applies.get("clusters", "all")),
        template=template.name, params=data["check"].get("params", {}),
        message=data["message"], needs=tuple(data.get("needs", ())))


_JSONPATH_KEYS = ("path", "refs", "where")


def _expression_errors(data: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """JSONPath expressions and regular expressions of a rule, compiled now so a typo is
    an error at the rule's line rather than a failed check on every object."""
    errors: list[tuple[tuple[Any, ...], str]] = []

    def check(value: Any, steps: tuple[Any, ...], key: str | None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                check(v, steps + (k,), str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                check(v, steps + (i,), key)
        elif isinstance(value, str):
            if key == "pattern":
                try:
                    re.compile(value)
                except re.error as exc:
                    errors.append((steps, f"invalid regular expression: {exc}"))
            elif value.startswith("$") or (key in _JSONPATH_KEYS and value[:1] in "$@["):
                try:
                    compile_query(value)  # checked, and compiled once for the scan
                except ValueError as exc:
                    errors.append((steps, str(exc)))

    applies = data.get("applies_to")
    if isinstance(applies, dict):
        check(applies.get("where"), ("applies_to", "where"), "where")
    if isinstance(data.get("check"), dict):
        check(data["check"].get("params", {}), ("check", "params"), None)
    return errors
