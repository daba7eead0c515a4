"""Runs one client over the case groups inside a fresh network namespace and
reads back, per URL, what really happened: ``proxy`` (the recording proxy got
the request, on the address of the variable that chose it), ``error`` (no
request reached the proxy and the client reported its refusal of the
configuration) or ``direct`` (anything else: the client went to the host itself)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from .cases import (
    LOCAL_RANGES,
    PROXY_PORT,
    TARGET_PORTS,
    Group,
    authority_key,
    url_key,
    variable_of,
    write_groups,
)

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True, slots=True)
class Observed:
    outcome: str  # "direct" | "proxy" | "error"
    variable: str | None
    detail: str  # the driver's status line, or the proxy's request line


class NamespaceUnavailable(RuntimeError):
    pass


def unshare_command() -> list[str]:
    """A new network+mount namespace (as root), or user+network+mount otherwise;
    fails when the kernel refuses one."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        raise NamespaceUnavailable("unshare and ip (util-linux, iproute2) are needed")
    command = ["unshare", "-nm"] if os.geteuid() == 0 else ["unshare", "-rnm"]
    probe = subprocess.run(command + ["true"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise NamespaceUnavailable(f"{' '.join(command)} failed: {probe.stderr.strip()}")
    return command


def run_client(groups: list[Group], work: Path, command: list[str], refusal: str | None = None,
               per_group: bool = False, timeout: int = 600) -> dict[tuple[int, int], Observed]:
    """Run ``command`` (a driver reading the groups file, or with ``per_group`` a
    client given each group's URLs as arguments) and classify every URL."""
    work.mkdir(parents=True, exist_ok=True)
    groups_file, results = work / "groups.tsv", work / "results.json"
    write_groups(groups, str(groups_file))
    spec = {"groups_file": str(groups_file), "command": command, "results": str(results),
            "per_group": per_group, "timeout": timeout, "proxy_port": PROXY_PORT,
            "target_ports": list(TARGET_PORTS), "local_ranges": list(LOCAL_RANGES),
            "groups": [asdict(g) | {"urls": list(g.urls)} for g in groups]}
    (work / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    done = subprocess.run(unshare_command() + [sys.executable, str(HERE / "netns.py"),
                                               str(work / "spec.json")],
                          capture_output=True, text=True, timeout=timeout + 60)
    if done.returncode != 0:
        raise RuntimeError(f"namespace run failed: {done.stdout[-2000:]}{done.stderr[-3000:]}")
    data = json.loads(results.read_text(encoding="utf-8"))
    return classify(groups, data, re.compile(refusal) if refusal else None)


def _hit_key(method: str, target: str) -> tuple[str, int] | None:
    if method == "CONNECT":  # host:port; urllib leaves an IPv6 host unbracketed
        host, _, port = target.rpartition(":")
        return authority_key(host, int(port)) if port.isdigit() else None
    if "://" in target:
        return url_key(target)
    return None


def classify(groups: list[Group], data: dict,
             refusal: re.Pattern[str] | None) -> dict[tuple[int, int], Observed]:
    by_gid = {g.gid: g for g in groups}
    out: dict[tuple[int, int], Observed] = {}
    for address, method, target in data["hits"]:
        variable, gid = variable_of(address)
        key = _hit_key(method, target)
        group = by_gid.get(gid)
        index = next((i for i, u in enumerate(group.urls) if url_key(u) == key), None) \
            if group and key else None
        if index is None:
            raise AssertionError(f"the proxy got a request no case asked for: {address} "
                                 f"{method} {target}")
        out.setdefault((gid, index), Observed("proxy", variable, f"{method} {target}"))
    for line in data["driver"]:
        gid_text, index_text, status = line.split("\t", 2)
        key = (int(gid_text), int(index_text))
        if key in out:
            continue
        refused = refusal is not None and refusal.search(status) is not None
        out[key] = Observed("error" if refused else "direct", None, status)
    missing = [(g.gid, i) for g in groups for i in range(len(g.urls)) if (g.gid, i) not in out]
    if missing:
        raise AssertionError(f"the driver reported nothing for {missing[:5]} ...")
    return out
