"""`hcpscan templates list` and `hcpscan templates show NAME`: what a rule can be built on."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hcpscan.cli.errors import UsageError
from hcpscan.cli.output import cells, console_for
from hcpscan.rules.templates import TEMPLATES, Template

DESCRIPTION = """\
Check templates: the code behind every rule. A rule file names one template and
its params (check: {template: NAME, params: {...}}); see docs/manual.md,
"Writing your own rules".

examples:
  hcpscan templates list
  hcpscan templates show reach
"""

_BASE_FIELDS = {"kind": "the subject's kind", "namespace": "the subject's namespace",
                "name": "the subject's name", "object": "the subject as `Kind namespace/name`",
                "cluster": "the cluster the subject belongs to"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("templates", help="list check templates or show one's parameters",
                                   description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(title="actions", metavar="ACTION")
    list_parser = sub.add_parser("list", help="name, subject kinds and description of every template")
    list_parser.add_argument("--format", choices=("table", "json"), default="table")
    list_parser.set_defaults(run=run_list)
    show = sub.add_parser("show", help="a template's parameters, the kinds it reads and its message fields")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.set_defaults(run=run_show)
    parser.set_defaults(run=lambda args: parser.print_help() or 0)


def describe(template: Template) -> dict[str, Any]:
    """A template as data: what `show` prints and `--format json` writes."""
    schema = template.params_schema
    params = _params(schema)
    return {"name": template.name, "description": template.description,
            "subject_kinds": list(template.subject_kinds) or ["any (the rule's applies_to.kinds)"],
            "params": params, "reads": sorted(template.reads),
            "message_fields": {**_BASE_FIELDS, **template.message_fields}}


def _params(schema: dict[str, Any], prefix: str = "") -> list[dict[str, Any]]:
    """Each parameter, and the keys of a parameter that is a mapping of fixed keys
    (``consumers.role``), so a rule's every key is documented."""
    required = set(schema.get("required", ()))
    out: list[dict[str, Any]] = []
    for name, spec in schema.get("properties", {}).items():
        out.append({"name": prefix + name, "required": name in required, "type": _type_text(spec),
                    "description": spec.get("description", "")})
        if spec.get("type") == "object" and spec.get("properties"):
            out += _params(spec, f"{prefix}{name}.")
    return out


def _type_text(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return " | ".join(map(str, spec["enum"]))
    if "anyOf" in spec or "oneOf" in spec:
        return " or ".join(_type_text(s) for s in spec.get("anyOf", spec.get("oneOf")) or [])
    if "const" in spec:
        return repr(spec["const"])
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type_text(spec.get('items', {}))}"
    return kind if isinstance(kind, str) else " | ".join(kind)


def run_list(args: argparse.Namespace) -> int:
    described = [describe(TEMPLATES[name]) for name in sorted(TEMPLATES)]
    if args.format == "json":
        from hcpscan.reporters.formats import write_json

        write_json("templates list", {"templates": described}, sys.stdout)
        return 0
    from rich.table import Table

    table = Table(title=f"{len(described)} templates", title_justify="left")
    for column in ("template", "subjects", "description"):
        table.add_column(column)
    for item in described:
        table.add_row(*cells(item["name"], ", ".join(item["subject_kinds"]), item["description"]))
    console_for(sys.stdout).print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    template = TEMPLATES.get(args.name)
    if template is None:
        raise UsageError(f"no template {args.name}", "list them with `hcpscan templates list`")
    item = describe(template)
    if args.format == "json":
        from hcpscan.reporters.formats import write_json

        write_json("templates show", {"template": item}, sys.stdout)
        return 0
    lines = [f"{item['name']}: {item['description']}", "",
             f"subjects: {', '.join(item['subject_kinds'])}",
             f"reads besides its subjects: {', '.join(item['reads']) or 'nothing'}", "", "params:"]
    for param in item["params"]:
        flag = "required" if param["required"] else "optional"
        lines.append(f"  {param['name']} ({param['type']}, {flag})"
                     + (f": {param['description']}" if param["description"] else ""))
    lines += ["", "message fields:"]
    lines += [f"  {{{name}}}: {text}" for name, text in item["message_fields"].items()]
    console_for(sys.stdout).print("\n".join(cells(*lines)), soft_wrap=True)
    return 0
