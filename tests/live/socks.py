"""A minimal SOCKS5 proxy for live tests (RFC 1928: no authentication, CONNECT only),
on 127.0.0.1: a kubeconfig ``proxy-url: socks5://...`` must reach the stand-in through it."""

from __future__ import annotations

import socket
import struct
import threading
from socketserver import StreamRequestHandler, ThreadingTCPServer

_TIMEOUT = 10.0


class _Socks5(StreamRequestHandler):
    timeout = _TIMEOUT

    def handle(self) -> None:
        version, count = self.rfile.read(2)
        self.rfile.read(count)  # offered methods; "no authentication" is chosen
        self.wfile.write(b"\x05\x00")
        version, command, _, kind = self.rfile.read(4)
        if kind == 1:
            host = socket.inet_ntoa(self.rfile.read(4))
        elif kind == 3:
            host = self.rfile.read(self.rfile.read(1)[0]).decode()
        else:
            host = socket.inet_ntop(socket.AF_INET6, self.rfile.read(16))
        (port,) = struct.unpack("!H", self.rfile.read(2))
        if version != 5 or command != 1:
            self.wfile.write(b"\x05\x07\x00\x01" + bytes(6))
            return
        upstream = socket.create_connection((host, port), timeout=_TIMEOUT)
        self.server.connections.append(f"{host}:{port}")  # type: ignore[attr-defined]
        self.wfile.write(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack("!H", 0))
        self.wfile.flush()
        pump = threading.Thread(target=_pump, args=(upstream, self.connection), daemon=True)
        pump.start()
        _pump(self.connection, upstream)
        pump.join(_TIMEOUT)


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(1 << 16):
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class Socks5Proxy(ThreadingTCPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Socks5)
        self.connections: list[str] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"socks5://127.0.0.1:{self.server_address[1]}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
