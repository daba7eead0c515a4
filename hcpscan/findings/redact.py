"""What a report may show of a value: credentials masked, control characters made visible.

Every string a human-facing output (terminal, Markdown, JUnit) shows passes through
:func:`shown`; JSON and SARIF are structured and keep values exact, but masked.

Credentials: ``scheme://user:password@host`` becomes ``scheme://user:****@host``,
and so does the scheme-less ``user:password@host[:port]`` that Go, curl and
Python accept as a proxy (they read it as ``http://``). A password may hold
``@`` (clients split at the last one). The scheme must start
at a token boundary (the look-behind), so a long run of letters without ``://``
is scanned once, not once per starting position.

Control characters: an object name, a value or a file name comes from the input;
raw, an ESC sequence or a newline in it could rewrite the lines around it
("Coverage: 25 rules: 25 passed") or a terminal's clipboard (OSC 52), and a
bidi override could reorder what the reader sees. They are shown as escapes
(``\\x1b``, ``\\n``, ``\\u202e``) instead.
"""

from __future__ import annotations

import re
from typing import Any

URL_WITH_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,31})://(?P<user>[^\s/:@'\"]+)"
    r":(?P<password>[^\s/]+)@(?P<host>[^\s/'\",@]+)")
# user:password@host[:port] with no scheme: it must start a token (start, space, quote,
# `=`, `,`, `(`) and end at one, so `image:tag@sha256:digest` and e-mail-like text
# (no password) are left alone.
HOST_WITH_PASSWORD = re.compile(
    r"(?:(?<=^)|(?<=[\s'\"=,(]))(?P<user>[^\s/:@'\"=,()]+):(?P<password>[^\s/]+)@"
    r"(?P<host>(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?)(?=$|[\s/'\",;)\]])")

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# the same but tab, newline and carriage return, for HTML, where they move nothing
_CONTROL_BUT_LAYOUT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                                 "\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def mask_credentials(text: str) -> str:
    if "@" not in text:
        return text
    text = URL_WITH_PASSWORD.sub(lambda m: f"{m['scheme']}://{m['user']}:****@{m['host']}", text)
    return HOST_WITH_PASSWORD.sub(lambda m: f"{m['user']}:****@{m['host']}", text)


def mask_values(value: Any) -> Any:
    """A JSON-like tree (reports, dumps) with every string value masked; keys and
    structure kept. Masking values rather than serialized text also catches a
    password holding a quote, which JSON would have escaped."""
    if isinstance(value, str):
        return mask_credentials(value)
    if isinstance(value, dict):
        return {key: mask_values(sub) for key, sub in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_values(sub) for sub in value]
    return value


def escape_controls(text: str, *, keep_layout: bool = False) -> str:
    """Control characters (C0, DEL, C1, line/paragraph separators, bidi controls) as
    visible escapes; everything else, including non-ASCII letters, unchanged.
    ``keep_layout`` leaves tab, newline and carriage return (HTML renders them as space)."""
    return (_CONTROL_BUT_LAYOUT if keep_layout else _CONTROL).sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def shown(value: object) -> str:
    """A value as a human-facing report shows it: masked, then escaped."""
    return escape_controls(mask_credentials(str(value)))
