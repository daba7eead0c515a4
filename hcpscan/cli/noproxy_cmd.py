"""`hcpscan noproxy`: how each HTTP client reads a NO_PROXY list, for given URLs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hcpscan.analysis.proxy.env import evaluate_env
from hcpscan.analysis.proxy.noproxy import (
    RUNTIME_NAMES,
    RUNTIMES,
    RuntimeRef,
    UnknownRuntime,
    bypasses,
    runtime_ref,
)
from hcpscan.analysis.proxy.target import Target, TargetError, parse_target
from hcpscan.cli.errors import UsageError
from hcpscan.cli.output import cells as output_cells
from hcpscan.cli.output import console_for, console_width, table_fits, wrapped
from hcpscan.core.redact import mask_credentials, mask_values, shown

DESCRIPTION = """\
Show, for each URL and each HTTP client runtime, whether a request goes direct
(NO_PROXY matched) or through the proxy, and which entry matched. Clients read
the same NO_PROXY list differently: CIDRs, leading dots, '*', ports and IPv6.

runtimes:
""" + "\n".join(f"  {name:15} {RUNTIMES[name].SUMMARY}" for name in RUNTIME_NAMES) + """

  java reads the list as the http.nonProxyHosts property ('|'-separated globs);
  it reads no environment variable.

versions (--runtime NAME@VERSION; a bare NAME is the newest release modelled):
""" + "\n".join(f"  {name:15} {e.label}: {e.changes}" for name in RUNTIME_NAMES
                for e in RUNTIMES[name].ERAS) + """

examples:
  hcpscan noproxy --no-proxy ".svc,.cluster.local,10.128.0.0/14" https://10.129.3.4 \\
      https://api.example.svc
  hcpscan noproxy --no-proxy "example.com" --runtime go --runtime curl http://www.example.com
  hcpscan noproxy --no-proxy "fd00::/8,*" --runtime curl@7.88 --runtime curl \\
      --runtime node-undici@7 --runtime node-undici@8 "http://[fd00::1]/"
  hcpscan noproxy --env HTTP_PROXY=http://proxy:3128 --env no_proxy=.internal \\
      --env NO_PROXY=.example.com http://www.example.com --format json
  hcpscan noproxy --env http_proxy=127.0.0.1:3128 --runtime node-undici --runtime ruby \\
      --runtime go http://api.example.test     # outcome "error": the client refuses it

JSON rows: version is the release asked for (null: the newest behaviour), models
the release range whose behaviour applies; outcome is direct, proxy or error (the
client refuses the configuration, reason says why); variable is the variable or
property that chose the proxy (or that the client refused); bypass (true =
direct) is kept for compatibility.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "noproxy", help="evaluate a NO_PROXY list per HTTP client for URLs",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("urls", nargs="+", metavar="URL",
                        help="scheme://host[:port]/..., host:port, or a bare host / IP")
    parser.add_argument("--no-proxy", dest="no_proxy", metavar="LIST",
                        help="the NO_PROXY value to evaluate (comma-separated)")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="a process environment variable (repeatable); evaluates each "
                             "client's full precedence: which *_PROXY and NO_PROXY it reads")
    parser.add_argument("--runtime", action="append", metavar="R[@VERSION]",
                        help="only these runtimes (repeatable), optionally at a release, e.g. "
                             "curl@7.88: " + ", ".join(RUNTIME_NAMES))
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or json")
    parser.set_defaults(run=run)


def _env(pairs: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {pair!r} is not KEY=VALUE",
                             "write e.g. --env HTTPS_PROXY=http://proxy:3128 (an empty value is "
                             "KEY=)")
        env[key] = value
    return env


def _runtimes(given: list[str] | None) -> list[tuple[str, RuntimeRef]]:
    """(text as given, what it names); a bare name is the newest modelled release."""
    out: dict[str, RuntimeRef] = {}
    for text in given or RUNTIME_NAMES:
        try:
            out[text] = runtime_ref(text)
        except UnknownRuntime as exc:
            raise UsageError(f"--runtime: {exc}",
                             "give NAME or NAME@VERSION within a known range; "
                             "`hcpscan noproxy --help` lists them") from None
    return list(out.items())


def _targets(urls: list[str]) -> list[Target]:
    out = []
    for url in urls:
        try:
            out.append(parse_target(url))
        except TargetError as exc:
            raise UsageError(f"cannot read URL {url!r}: {exc}",
                             "give scheme://host[:port], host:port or a host name") from None
    return out


def run(args: argparse.Namespace) -> int:
    if args.no_proxy is None and not args.env:
        raise UsageError("give the list to evaluate with --no-proxy LIST, or an environment "
                         "with --env KEY=VALUE", "e.g. hcpscan noproxy --no-proxy .svc "
                         "https://kubernetes.default.svc")
    if args.no_proxy is not None and args.env:
        raise UsageError("--no-proxy and --env cannot be combined",
                         "put the list in the environment instead: --env NO_PROXY=LIST")
    runtimes = _runtimes(args.runtime)
    targets = _targets(args.urls)
    rows: list[dict[str, Any]] = []
    env = _env(args.env)
    for target in targets:
        for given, ref in runtimes:
            row: dict[str, Any] = {"url": target.raw, "runtime": ref.name, "version": ref.version_given,
                   "models": ref.era_label, "label": given}
            if args.env:
                d = evaluate_env(ref, env, target)
                row.update({"outcome": d.outcome, "variable": d.variable, "bypass": d.bypass,
                            "matched": d.matched,
                            "proxy": d.proxy if d.outcome == "proxy" else None,
                            "reason": d.reason})
            else:
                decision = bypasses(ref, args.no_proxy, target)
                row.update({"outcome": "direct" if decision.bypass else "proxy",
                            "variable": None, "bypass": decision.bypass,
                            "matched": decision.matched, "reason": decision.reason})
            rows.append(row)
    if args.format == "json":
        keys = ("url", "runtime", "version", "models", "outcome", "variable", "bypass",
                "matched") + \
            (("proxy",) if args.env else ()) + ("reason",)
        # --env values and URLs may carry user:password@ as clients accept them
        from hcpscan.reporters.formats import write_json

        write_json("noproxy", {"decisions": mask_values([{k: row[k] for k in keys} for row in rows])},
                   sys.stdout, ensure_ascii=False)
        return 0
    _table(rows, targets, runtimes)
    return 0


def _cell(row: dict[str, Any]) -> str:
    if row["outcome"] == "error":
        return f"error ({row['reason']})"
    if row["bypass"]:
        why = row["matched"] or row.get("reason")
        return f"direct ({why})" if why else "direct"
    via = f" via {row['variable']}" if row.get("variable") else ""
    return f"proxy {mask_credentials(row['proxy'])}{via}" if row.get("proxy") else "proxy"


def _table(rows: list[dict[str, Any]], targets: list[Target],
           runtimes: list[tuple[str, RuntimeRef]]) -> None:
    """One row per URL and a column per runtime when that fits the terminal without
    breaking a word; else one block per URL, the runtimes grouped by what they do."""
    from rich.table import Table

    header = ["URL", *(given for given, _ref in runtimes)]
    body = []
    for i, target in enumerate(targets):
        cells = rows[i * len(runtimes):(i + 1) * len(runtimes)]
        body.append([target.raw, *(_cell(c) for c in cells)])
    width = console_width(sys.stdout)
    if not table_fits(header, body, width):
        _blocks(header[1:], body, width)
        return
    table = Table(title_justify="left")
    for column in header:
        table.add_column(column, overflow="fold")
    for row in body:
        table.add_row(*output_cells(*row))
    console_for(sys.stdout).print(table)


def _blocks(runtimes: list[str], body: list[list[str]], width: int) -> None:
    lines: list[str] = []
    for url, *cells in body:
        groups: dict[str, list[str]] = {}
        for runtime, cell in zip(runtimes, cells, strict=True):
            groups.setdefault(cell, []).append(runtime)
        lines += wrapped(shown(url), width, "  ")  # a long URL breaks after a slash
        for cell, names in groups.items():
            lines += wrapped(f"  {shown(cell)}: {', '.join(names)}", width, "      ")
    sys.stdout.write("\n".join(lines) + "\n")
