"""Runs inside a private network (and mount) namespace made by ``unshare``:
brings up ``lo``, routes the documentation ranges the cases use to ``lo``,
points the resolver at 127.0.0.1 (where nothing answers), starts a recording
proxy and a target server on loopback, runs one client driver over every case
group, and writes what the proxy saw. Nothing here can reach another machine:
the namespace has no interface but ``lo``, and the script refuses to run if it
sees one.

Usage (see ``runner.py``): ``unshare -nm python3 netns.py SPEC.json`` (``-rnm`` when
not root).
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading

HITS: list[list[str]] = []
_LOCK = threading.Lock()


def _setup(local_ranges: list[str]) -> None:
    links = subprocess.run(["ip", "-o", "link", "show"], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    names = [line.split(":")[1].strip() for line in links]
    if names != ["lo"]:
        sys.exit(f"refusing to run: this namespace has interfaces {names}, not only lo")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for cidr in local_ranges:  # every address in them is this namespace's own
        family = "-6" if ":" in cidr else "-4"
        subprocess.run(["ip", family, "route", "add", "local", cidr, "dev", "lo"], check=True)
    # Names resolve from /etc/hosts only; were DNS asked anyway, it would be 127.0.0.1.
    _bind_over("/etc/resolv.conf", "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
    if os.path.isfile("/etc/nsswitch.conf"):
        with open("/etc/nsswitch.conf", encoding="utf-8") as f:
            lines = [ln for ln in f if not ln.startswith("hosts:")]
        _bind_over("/etc/nsswitch.conf", "".join(lines) + "hosts: files\n")


def _bind_over(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` in this mount namespace only."""
    with tempfile.NamedTemporaryFile("w", suffix=".netns", delete=False) as copy:
        copy.write(text)
    subprocess.run(["mount", "--bind", copy.name, path], check=True)


def _read_head(conn: socket.socket) -> bytes:
    conn.settimeout(3)
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


class _Proxy(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        try:
            head = _read_head(self.request)
        except OSError:
            return
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, _, rest = line.partition(" ")
        target = rest.rpartition(" ")[0] if " " in rest else rest
        with _LOCK:
            HITS.append([self.request.getsockname()[0], method, target])
        if method == "CONNECT":
            reply = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        else:
            reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        try:
            self.request.sendall(reply)
        except OSError:
            pass


class _Target(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        try:
            self.request.settimeout(3)
            self.request.recv(65536)  # one read: a TLS hello never ends a header block
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                                 b"Connection: close\r\n\r\nok")
        except OSError:
            pass


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        super().server_bind()


def _serve(proxy_port: int, target_ports: list[int]) -> list[socketserver.BaseServer]:
    # 0.0.0.0 and :: here are the namespace's own lo: it has no other interface
    servers: list[socketserver.BaseServer] = [_Server(("0.0.0.0", proxy_port), _Proxy)]
    for port in target_ports:
        servers.append(_Server(("0.0.0.0", port), _Target))
        servers.append(_Server6(("::", port), _Target))
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    return servers


def _base_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "GOCACHE", "TMPDIR")
    return {k: os.environ[k] for k in keep if k in os.environ}


def _run_driver(spec: dict) -> list[str]:
    done = subprocess.run(spec["command"] + [spec["groups_file"]], env=_base_env(),
                          capture_output=True, text=True, timeout=spec.get("timeout", 600))
    if done.returncode != 0:
        sys.exit(f"driver failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout.splitlines()


def _run_per_group(spec: dict) -> list[str]:
    """For a client that reads its environment once per process (wget): one process
    per group, all of the group's URLs in it."""
    lines = []
    for group in spec["groups"]:
        env = _base_env() | group["env"]
        subprocess.run(spec["command"] + group["urls"], env=env, capture_output=True,
                       timeout=120)
        lines += [f"{group['gid']}\t{i}\tok" for i in range(len(group["urls"]))]
    return lines


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    _setup(spec["local_ranges"])
    servers = _serve(spec["proxy_port"], spec["target_ports"])
    lines = _run_per_group(spec) if spec.get("per_group") else _run_driver(spec)
    for server in servers:
        server.shutdown()
    addresses = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
    with open(spec["results"], "w", encoding="utf-8") as out:
        json.dump({"driver": lines, "hits": HITS, "addresses": addresses}, out)


if __name__ == "__main__":
    main()
