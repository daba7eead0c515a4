"""Conformance driver for Python clients: urllib, requests, and libcurl (through
ctypes, so one process runs every case; libcurl reads the proxy variables on
each transfer). Usage: py_driver.py urllib|requests|libcurl GROUPS_FILE.
Prints ``gid<TAB>index<TAB>ok|err <message>`` per URL."""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Iterator

TIMEOUT = 3


def groups(path: str) -> Iterator[tuple[str, dict[str, str], list[tuple[str, str]]]]:
    gid, env, urls = None, {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            kind, *rest = line.rstrip("\n").split("\t")
            if kind == "G":
                if gid is not None:
                    yield gid, env, urls
                gid, env, urls = rest[0], {}, []
            elif kind == "E":
                env[rest[0]] = rest[1]
            elif kind == "U":
                urls.append((rest[0], rest[1]))
    if gid is not None:
        yield gid, env, urls


def _urllib() -> Callable[[str], str]:
    import urllib.request

    opener = urllib.request.build_opener()  # reads the proxy variables now

    def get(url: str) -> str:
        with opener.open(urllib.request.Request(url, method="HEAD"), timeout=TIMEOUT) as r:
            return f"ok {r.status}"
    return get


def _requests() -> Callable[[str], str]:
    import requests

    def get(url: str) -> str:
        return f"ok {requests.head(url, timeout=TIMEOUT, verify=False).status_code}"
    return get


def _libcurl() -> Callable[[str], str]:
    lib = ctypes.CDLL("libcurl.so.4")
    lib.curl_easy_init.restype = ctypes.c_void_p
    lib.curl_easy_setopt.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.curl_easy_perform.argtypes = [ctypes.c_void_p]
    lib.curl_easy_cleanup.argtypes = [ctypes.c_void_p]
    lib.curl_easy_strerror.restype = ctypes.c_char_p
    url_opt, nobody, timeout_ms, verify_peer, verify_host = 10002, 44, 155, 64, 81

    def get(url: str) -> str:
        handle = lib.curl_easy_init()  # a fresh handle: no connection reuse across cases
        try:
            data = ctypes.c_char_p(url.encode())
            lib.curl_easy_setopt(handle, url_opt, ctypes.cast(data, ctypes.c_void_p))
            for opt, value in ((nobody, 1), (timeout_ms, TIMEOUT * 1000), (verify_peer, 0),
                               (verify_host, 0)):
                lib.curl_easy_setopt(handle, opt, ctypes.c_void_p(value))
            code = lib.curl_easy_perform(handle)
            return "ok" if code == 0 else f"err {lib.curl_easy_strerror(code).decode()}"
        finally:
            lib.curl_easy_cleanup(handle)
    return get


def main() -> None:
    mode, path = sys.argv[1], sys.argv[2]
    make = {"urllib": _urllib, "requests": _requests, "libcurl": _libcurl}[mode]
    previous: dict[str, str] = {}
    for gid, env, urls in groups(path):
        for key in previous:
            os.environ.pop(key, None)
        os.environ.update(env)
        previous = env
        get = make()
        for index, url in urls:
            try:
                status = get(url)
            except Exception as exc:  # noqa: BLE001  every failure is a result to report
                status = f"err {type(exc).__name__}: {exc}"
            print(f"{gid}\t{index}\t{' '.join(status.split())}", flush=True)


if __name__ == "__main__":
    main()
