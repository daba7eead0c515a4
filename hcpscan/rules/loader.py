"""Load and validate rule files; a broken rule file is an error naming its file and line."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from hcpscan.findings.model import RuleDocs, RuleInfo, Severity
from hcpscan.inventory.jsonpaths import compile_query
from hcpscan.rules.model import AppliesTo, Rule
from hcpscan.rules.primitives import PRIMITIVES
from hcpscan.rules.schema import RULE_SCHEMA
from hcpscan.sources.yamldocs import YamlSyntaxError, locate, parse_documents

_VALIDATOR = jsonschema.Draft202012Validator(RULE_SCHEMA)


class RuleFileError(Exception):
    def __init__(self, path: str, line: int | None, message: str) -> None:
        super().__init__(f"{path}:{line or 1}: {message}")
        self.path = path
        self.line = line
        self.message = message


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
    return Path(str(resources.files("hcpscan.catalog")))


def load_rule_dirs(dirs: list[Path]) -> list[Rule]:
    rules: dict[str, Rule] = {}
    for folder in dirs:
        if not folder.is_dir():
            raise RuleFileError(str(folder), None, "rule directory not found")
        for path in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")):
            rule = load_rule_file(path)
            if rule.id in rules:
                raise RuleFileError(str(path), 1, f"rule id {rule.id} is already defined in "
                                                  f"{rules[rule.id].info.source}")
            rules[rule.id] = rule
    return sorted(rules.values(), key=lambda r: r.id)


def load_rule_file(path: Path) -> Rule:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleFileError(str(path), None, f"cannot read rule file: {exc}") from None
    try:
        docs = list(parse_documents(text))
    except YamlSyntaxError as exc:
        raise RuleFileError(str(path), exc.line, f"invalid YAML: {exc.message}") from None
    if len(docs) != 1 or not isinstance(docs[0].body, dict):
        raise RuleFileError(str(path), 1, "a rule file holds exactly one YAML mapping")
    data = docs[0].body
    errors = sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        steps = tuple(err.absolute_path)
        where = locate(text, 0, None, steps)
        field = ".".join(str(s) for s in steps) or "(top level)"
        raise RuleFileError(str(path), where[0] if where else 1, f"{field}: {err.message}")
    primitive = PRIMITIVES.get(data["check"]["primitive"])
    if primitive is None:
        where = locate(text, 0, None, ("check", "primitive"))
        known = ", ".join(sorted(PRIMITIVES))
        raise RuleFileError(str(path), where[0] if where else 1,
                            f"unknown check primitive {data['check']['primitive']!r} (known: {known})")
    params = data["check"].get("params", {})
    for steps, message in _expression_errors(data):
        where = locate(text, 0, None, steps)
        raise RuleFileError(str(path), where[0] if where else 1,
                            f"{'.'.join(map(str, steps))}: {message}")
    problem = primitive.validate(params)
    if problem:
        steps, message = problem
        where = locate(text, 0, None, ("check", "params", *steps))
        raise RuleFileError(str(path), where[0] if where else 1, f"check.params: {message}")
    return _build(path, data)


def _build(path: Path, data: dict[str, Any]) -> Rule:
    docs = data["docs"]
    info = RuleInfo(
        id=data["id"], title=data["title"], severity=Severity(data["severity"]),
        category=data["category"],
        docs=RuleDocs(what=docs["what"], why=docs["why"], failing=docs["failing"],
                      passing=docs["passing"], fix=docs["fix"],
                      known_problems=docs.get("known_problems", ""),
                      references=tuple(docs["references"])),
        tags=tuple(data.get("tags", ())), precision=data.get("precision", "high"), source=str(path))
    applies = data["applies_to"]
    return Rule(
        info=info,
        applies_to=AppliesTo(
            kinds=tuple(applies["kinds"]), api_versions=tuple(applies.get("api_versions", ())),
            namespaces=tuple(applies.get("namespaces", ())), names=tuple(applies.get("names", ())),
            labels=tuple(sorted(applies.get("labels", {}).items())), where=applies.get("where"),
            clusters=applies.get("clusters", "all")),
        primitive=data["check"]["primitive"], params=data["check"].get("params", {}),
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

    check(data.get("applies_to", {}).get("where"), ("applies_to", "where"), "where")
    check(data["check"].get("params", {}), ("check", "params"), None)
    return errors
