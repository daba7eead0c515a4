"""What a report may show of a value: credentials masked, control characters made visible.

Every string a human-facing output (terminal, Markdown, JUnit) shows passes through
:func:`shown`; JSON and SARIF are structured and keep values exact, but masked.

Credentials: ``scheme://user:password@host`` becomes ``scheme://user:****@host``,
and so does the scheme-less ``user:password@host[:port]`` that Go, curl and
Python accept as a proxy (they read it as ``http://``). Where a userinfo ends
(the last ``@``, the first ``:``) is decided once, in :mod:`hcpscan.core.userinfo`.

Control characters: an object name, a value or a file name comes from the input;
raw, an ESC sequence or a newline in it could rewrite the lines around it
("Coverage: 25 rules: 25 passed") or a terminal's clipboard (OSC 52), and a
bidi override could reorder what the reader sees. They are shown as escapes
(``\\x1b``, ``\\n``, ``\\u202e``) instead.
"""

from __future__ import annotations

import re
from typing import Any

from hcpscan.core.userinfo import find_credentials

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# the same but tab, newline and carriage return, for HTML, where they move nothing
_CONTROL_BUT_LAYOUT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                                 "\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# a control character but tab and newline (one character class: a fast scan)
_CONTROL_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                                "\u202a-\u202e\u2066-\u2069]")


def mask_credentials(text: str) -> str:
    """``text`` with the password of every ``user:password@`` (as
    :mod:`hcpscan.core.userinfo` finds them) replaced by ``****``."""
    found = find_credentials(text)
    if not found:
        return text
    parts, at = [], 0  # joined once: a text holding many credentials costs linear time
    for cred in sorted(found, key=lambda c: c.password_start):
        if cred.password_start < at:  # inside a password already masked: hide its rest too
            at = max(at, cred.password_end)
            continue
        parts += [text[at:cred.password_start], "****"]
        at = cred.password_end
    parts.append(text[at:])
    return "".join(parts)


# an authentication value as headers and error messages write it: `Bearer <token>`,
# `Basic <base64>`, `token=<value>`, `password: <value>`
_AUTH_VALUE = re.compile(r"(?i)\b(bearer|basic)(\s+)[^\s\"',;]+|"
                         r"\b(token|password|secret)(\s*[=:]\s*)[^\s\"',;]+")


def mask_auth_values(text: str) -> str:
    """``text`` with the value of every ``Bearer <token>``, ``Basic <value>``, ``token=``,
    ``password:`` or ``secret=`` replaced by ``****``."""
    return _AUTH_VALUE.sub(lambda m: f"{m[1] or m[3]}{m[2] or m[4]}****", text)


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


def lines_shown_as_they_are(text: str, count: int) -> bool:
    """Whether ``count`` lines joined by newlines into ``text`` (a line may start with
    tabs, its layout) are each what :func:`shown` makes of it: no ``@`` that could start a
    credential's end, no control character, no newline inside a line. One pass over a big
    listing instead of one masking and escaping per line."""
    if "@" in text or text.count("\n") != count - 1 or _CONTROL_BUT_LINES.search(text):
        return False
    at = text.find("\t")
    while at != -1:  # tabs are rare: each must lead its line
        if at and text[at - 1] not in "\n\t":
            return False
        at = text.find("\t", at + 1)
    return True


def shown(value: object) -> str:
    """A value as a human-facing report shows it: masked, then escaped."""
    return escape_controls(mask_credentials(str(value)))
