"""A deadline for a whole request, not for each socket read.

urllib3's read timeout bounds one ``recv``: a server that sends one header line
(or one body byte) every few seconds keeps a request alive forever. Here every
connection's socket is wrapped so that each read may wait only for what is left
of the current request's deadline; the deadline is per thread, because a
request runs on one thread from start to end. Connecting (TCP, proxy CONNECT,
TLS handshake) reads the raw socket before it can be wrapped, so a watchdog
shuts that socket down when the deadline passes: a server that dribbles its
TLS handshake a byte at a time cannot outlast the request either.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import urllib3

_current = threading.local()


class DeadlineExceeded(socket.timeout):
    """The request's deadline passed while waiting for the server."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Reads on this thread's connections end ``seconds`` from now."""
    _current.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _current.at = None


def time_left() -> float | None:
    at = getattr(_current, "at", None)
    return None if at is None else at - time.monotonic()


class _DeadlineSocket:
    """A connected socket (plain or TLS) whose reads honour the thread's deadline."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock

    def _arm(self) -> None:
        left = time_left()
        if left is None:
            return
        if left <= 0:
            raise DeadlineExceeded("the request deadline passed")
        self._sock.settimeout(left)

    # arguments passed on as given: SSLSocket reads nbytes=0 as "read nothing"
    def recv_into(self, buffer: Any, *args: Any) -> int:
        self._arm()
        return self._sock.recv_into(buffer, *args)

    def recv(self, bufsize: int, *args: Any) -> bytes:
        self._arm()
        return self._sock.recv(bufsize, *args)

    def makefile(self, mode: str = "r", buffering: int | None = None, **_: Any) -> io.BufferedReader:
        """http.client reads the status line, headers and body through this file."""
        if "w" in mode or "b" not in mode:
            raise ValueError(f"unsupported makefile mode {mode!r}")
        raw = socket.SocketIO(self, "rb")  # type: ignore[arg-type]  # reads via recv_into above
        # as socket.makefile does: the socket really closes only once this file is closed
        # too (http.client closes the connection of a "Connection: close" answer early)
        if hasattr(self._sock, "_io_refs"):
            self._sock._io_refs += 1
        return io.BufferedReader(raw, buffering or io.DEFAULT_BUFFER_SIZE)

    def _decref_socketios(self) -> None:
        if hasattr(self._sock, "_decref_socketios"):
            self._sock._decref_socketios()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def _with_deadline(connection_cls: type) -> type:
    class DeadlineConnection(connection_cls):  # type: ignore[misc, valid-type]
        _raw: Any = None
        sock: Any  # set by the base class's connect()

        def _new_conn(self) -> Any:
            self._raw = super()._new_conn()  # the TCP socket, before any TLS or CONNECT
            return self._raw

        def connect(self) -> None:
            left = time_left()
            watchdog = None
            if left is not None:
                watchdog = threading.Timer(max(left, 0.0), self._abort_connect)
                watchdog.daemon = True
                watchdog.start()
            try:
                super().connect()
            except OSError:
                left = time_left()
                if left is not None and left <= 0:
                    raise DeadlineExceeded("the request deadline passed while connecting") from None
                raise
            finally:
                if watchdog is not None:
                    watchdog.cancel()
            self.sock = _DeadlineSocket(self.sock)

        def _abort_connect(self) -> None:
            raw = self._raw
            if raw is not None:
                try:
                    raw.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed or never connected

    DeadlineConnection.__name__ = f"Deadline{connection_cls.__name__}"
    return DeadlineConnection


def enforce_deadlines(pool: urllib3.PoolManager) -> None:
    """Make every connection the pool manager opens honour :func:`deadline` (direct,
    through an HTTP proxy, through SOCKS)."""
    classes = {}
    pool_cls: Any
    for scheme, pool_cls in pool.pool_classes_by_scheme.items():
        classes[scheme] = type(f"Deadline{pool_cls.__name__}", (pool_cls,),
                               {"ConnectionCls": _with_deadline(pool_cls.ConnectionCls)})
    pool.pool_classes_by_scheme = classes
