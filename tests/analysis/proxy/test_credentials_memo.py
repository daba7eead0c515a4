"""credentials() remembers what it found in a text a fleet repeats (one script in every
control plane), and answers as find_credentials does, each caller with a list of its own."""

from __future__ import annotations

from hcpscan.analysis.proxy import validity
from hcpscan.analysis.proxy.validity import credentials
from hcpscan.core.userinfo import find_credentials

SCRIPT = ("#!/bin/sh\nexport HTTPS_PROXY=http://svc:S3cret@proxy.corp:3128\n"
          "curl -x socks5://u:p@10.0.0.1:1080 https://example.com\n") * 40
TEXTS = [SCRIPT, "http://svc:pass@proxy:3128", "svc:pa ss@proxy:3128", "mail ops@example.com",
         "no at sign", "", "http://a:b@p:1,http://c:d@q:2", SCRIPT * 80]  # the last > 16 Ki


def test_credentials_answer_as_find_credentials_the_first_time_and_every_time() -> None:
    assert len(SCRIPT * 80) > validity._REMEMBERED_LENGTH
    for _ in range(3):
        for text in TEXTS:
            assert credentials(text) == find_credentials(text), text[:40]
    assert credentials(SCRIPT), "the script's two URLs carry passwords"


def test_a_caller_changing_its_list_changes_no_later_answer() -> None:
    first = credentials(SCRIPT)
    expected = list(first)
    first.clear()
    assert credentials(SCRIPT) == expected
