"""Which Unicode encoding a YAML or JSON file's bytes are in, as YAML 1.2 decides it.

YAML 1.2 (section 5.2, "Character Encodings") reads UTF-8, UTF-16 and UTF-32, and
deduces the encoding from the first bytes: a byte order mark, else the pattern of
zero bytes around the first character, which the spec requires to be ASCII
(``00 00 00 x`` UTF-32BE, ``x 00 00 00`` UTF-32LE, ``00 x`` UTF-16BE, ``x 00``
UTF-16LE), else UTF-8. JSON (RFC 8259) is UTF-8 on the wire, yet files saved by
Windows tools are often UTF-16: PowerShell 5.1's ``kubectl get ... > file.yaml``
writes UTF-16LE with a byte order mark. Both detections are exact, not guesses: a
UTF-8 text never holds a zero byte, so a zero byte among the first two is either
one of these patterns or a binary file; a file sniffed as UTF-16/32 that does not
decode strictly, that decodes to a character YAML does not allow (NUL, other control
characters), or, without a byte order mark, to a text with no line break and no ``:``
(``wide_text``), is binary after all.
"""

from __future__ import annotations

import codecs
import re

UTF8 = "utf-8"
# (byte order mark, codec): UTF-32LE's mark starts with UTF-16LE's, so it is tried first
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF8, UTF8), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))


def sniff_encoding(data: bytes) -> tuple[str, int]:
    """(codec, length of its byte order mark) of a text's bytes, as YAML 1.2 deduces it."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    head = data[:4]
    if len(head) == 4 and head[:3] == b"\0\0\0" and 0 < head[3] < 0x80:
        return "utf-32-be", 0
    if len(head) == 4 and head[1:] == b"\0\0\0" and 0 < head[0] < 0x80:
        return "utf-32-le", 0
    if len(head) >= 2 and head[0] == 0 and 0 < head[1] < 0x80:
        return "utf-16-be", 0
    if len(head) >= 2 and head[1] == 0 and 0 < head[0] < 0x80:
        return "utf-16-le", 0
    return UTF8, 0


def decode_text(data: bytes, errors: str = "strict") -> str:
    """The text of ``data`` in the encoding YAML 1.2 deduces, its byte order mark
    dropped. ``UnicodeDecodeError`` (strict) when the bytes are not that encoding."""
    codec, bom = sniff_encoding(data)
    return data[bom:].decode(codec, errors)


# What YAML 1.2 lets a stream hold (section 5.1, c-printable, with the byte order mark):
# tab, LF, CR, NEL and the printable characters; no other control character, no
# surrogate, no U+FFFE/U+FFFF.
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def wide_text(data: bytes) -> str | None:
    """The text of a UTF-16 or UTF-32 file; None when ``data`` is UTF-8 or no YAML text in
    that encoding. The rule, exact: the bytes decode strictly; every character is one YAML
    allows in a stream (``_NOT_PRINTABLE``: no NUL or other control character but tab, LF,
    CR, NEL); and, when no byte order mark says the encoding (the zero-byte pattern of
    the first character alone does), the text holds a line break or a ``:``, as a mapping
    (any manifest) does. Binary bytes often start with an ASCII byte and a zero (``a\0``
    reads as UTF-16LE "a"): without a mark, a text that short says nothing of itself."""
    codec, bom = sniff_encoding(data)
    if codec == UTF8:
        return None
    try:
        text = data[bom:].decode(codec)
    except UnicodeDecodeError:
        return None
    if _NOT_PRINTABLE.search(text.replace("\ufeff", "")):
        return None
    if not bom and not any(c in text for c in ":\n\r"):
        return None
    return text
