"""Credentials never leave the scanner: every string a report shows passes through here.

``scheme://user:password@host`` becomes ``scheme://user:****@host``. The scheme must
start at a token boundary (the look-behind), so a long run of letters without
``://`` is scanned once, not once per starting position.
"""

from __future__ import annotations

import re

URL_WITH_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,31})://(?P<user>[^\s/:@'\"]+)"
    r":(?P<password>[^\s/@'\"]+)@(?P<host>[^\s/'\",]+)")


def mask_credentials(text: str) -> str:
    if "@" not in text:
        return text
    return URL_WITH_PASSWORD.sub(lambda m: f"{m['scheme']}://{m['user']}:****@{m['host']}", text)
