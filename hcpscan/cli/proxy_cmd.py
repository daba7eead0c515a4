"""`hcpscan proxy PATH...`: each consumer's effective proxy settings, with sources."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hcpscan.analysis.proxy.effective import effective_proxies
from hcpscan.analysis.proxy.noproxy import RUNTIME_NAMES
from hcpscan.analysis.proxy.settings import ConsumerProxy, Setting
from hcpscan.cli.inputs import add_path_arguments, exit_code_for_input, load_inventory
from hcpscan.cli.output import (
    cells,
    common_folder,
    console_for,
    diagnostics_table,
    say_passed_over,
    table_fits,
    wrapped,
)
from hcpscan.core.redact import mask_values, shown

DESCRIPTION = """\
List every consumer of proxy settings found in the given paths — containers of
all workload kinds, konnectivity proxy sidecars, the OpenShift Proxy object and
install-config, HostedCluster configuration.proxy, ignition stubs, systemd
drop-ins, KubeadmConfig and KubeadmControlPlane files, MachineConfig files, Giant
Swarm cluster values, Helm chart values (HelmRelease, App, *-user-values), OCM
AddOnDeploymentConfigs (and the add-ons that get them), KlusterletConfigs,
KlusterletAddonConfigs and kubeconfigs — with its effective httpProxy, httpsProxy and noProxy and the file
and line each value comes from. Values that cannot be known offline (a Secret
redacted in a must-gather, a ConfigMap missing from the dump) show as unknown.

examples:
  hcpscan proxy ./hcp-namespace-manifests/
  hcpscan proxy must-gather.local.123 --format json | jq '.consumers[] | select(.httpsProxy)'
  hcpscan proxy manifests/ --runtime curl   # containers as curl would read their env
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("proxy", help="list each consumer's effective proxy settings",
                                   description=DESCRIPTION,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_path_arguments(parser)
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json (every value with its source)")
    parser.add_argument("--runtime", choices=RUNTIME_NAMES, default="go",
                        help="env precedence used for containers and drop-ins (default: go, "
                             "what Kubernetes and OpenShift components use)")
    parser.add_argument("--all", action="store_true",
                        help="also list containers without any proxy variable")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    inventory = load_inventory(args)
    say_passed_over(inventory)
    consumers = effective_proxies(inventory, args.runtime, include_unset=args.all)
    if args.format == "json":
        from hcpscan.reporters.formats import write_json

        write_json("proxy", {"consumers": mask_values([c.to_json() for c in consumers])},
                   sys.stdout, ensure_ascii=False)
        if inventory.diagnostics:  # an exit code 2 must say why
            console_for(sys.stderr).print(diagnostics_table(inventory.diagnostics))
        return exit_code_for_input(inventory)
    from rich.table import Table

    console = console_for(sys.stdout)
    paths = [setting.source.path for c in consumers
             for setting in (c.http_proxy, c.https_proxy, c.no_proxy) if setting is not None]
    root = common_folder(paths)  # a must-gather's long prefix, said once
    title = f"{len(consumers)} proxy consumers" + (f" (files under {root}/)" if root else "")
    header = ["consumer", "httpProxy", "httpsProxy", "noProxy", "from"]
    rows: list[list[Any]] = [[consumer.name, _value(consumer.http_proxy), _value(consumer.https_proxy),
             _value(consumer.no_proxy), _sources(consumer, root)] for consumer in consumers]
    width = console.width
    if not table_fits(header, [[*r[:4], " ".join(r[4])] for r in rows], width):
        _blocks(title, header, rows, width)
    else:
        table = Table(title=title, title_justify="left")
        for column in header:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*cells(*row))
        console.print(table)
    if inventory.diagnostics:
        console.print(diagnostics_table(inventory.diagnostics))
    return exit_code_for_input(inventory)


def _value(setting: Setting | None) -> str:
    if setting is None:
        return "-"
    if setting.value is None:
        return f"unknown ({setting.unknown})"
    return setting.value or '""'


def _blocks(title: str, header: list[str], rows: list[list[Any]], width: int) -> None:
    """One block per consumer when the table would break words: each value on its own
    line, wrapped between words."""
    lines = wrapped(title, width, "  ")
    for name, *values, sources in rows:
        lines += [""] + wrapped(shown(name), width, "  ")
        for column, value in zip(header[1:4], values, strict=True):
            if value != "-":
                lines += wrapped(f"  {column}: {shown(value)}", width, "      ")
        lines += [piece for source in sources for piece in wrapped(f"  {shown(source)}", width,
                                                                    "      ")]
    sys.stdout.write("\n".join(lines) + "\n")


def _sources(consumer: ConsumerProxy, root: str = "") -> list[str]:
    lines: list[str] = []
    seen: set[tuple[str, int]] = set()
    for setting in (consumer.http_proxy, consumer.https_proxy, consumer.no_proxy):
        if setting is None or (setting.source.path, setting.source.line) in seen:
            continue
        seen.add((setting.source.path, setting.source.line))
        path = setting.source.path
        if root and path.startswith(root + "/"):
            path = path[len(root) + 1:]
        lines.append(f"{setting.name}: {path}:{setting.source.line}")
    if consumer.via is not None:
        via = consumer.via
        lines.append(f"via {via.kind} {via.container or via.name}"
                     + (f" (upstream {_value(via.https_proxy)})" if via.https_proxy else
                        " (no upstream proxy)" if via.kind == "konnectivity-sidecar" else ""))
    if consumer.ca_bundle is not None:
        lines.append(f"CA bundle: {len(consumer.ca_bundle)} certificate(s)"
                     + (f", {len(consumer.ca_bundle.problems)} problem(s)"
                        if consumer.ca_bundle.problems else ""))
    return lines
