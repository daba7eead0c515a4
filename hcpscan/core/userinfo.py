"""The one parser of URL userinfo: where, in any text, a ``user:password@`` sits.

Every output that masks passwords (:mod:`hcpscan.core.redact`), the rule that
reports credentials in plain text, the proxy URL checks and the live client's
messages find credentials here, so they cannot disagree about what a password is.

How clients read it (Go ``net/url``, curl, Python ``urllib.parse``):

* the authority runs from ``scheme://`` to the first ``/``, ``?`` or ``#`` (a
  password is looked for up to the first ``/``: one holding a raw ``?`` or ``#``
  breaks the URL for clients, but is still a password written down; so is one
  holding a raw ``/`` (a generated password pasted unencoded): when an ``@`` and a
  host ending the token follow a ``/``, the userinfo runs to that ``@``, so
  ``http://u:pw@proxy/x@y`` shows as ``http://u:****@y``: more hidden, nothing shown);
* the **last** ``@`` of the authority ends the userinfo, so a user name may hold
  ``@`` (``http://jdoe@corp.example.com:PW@proxy:3128``) and so may a password;
* the **first** ``:`` of the userinfo ends the user name, which may be empty
  (``http://:PW@proxy``);
* a proxy written without a scheme (``user:PW@host:port``) is read as ``http://``
  by Go, curl and Python, so it is found too when it stands as a token
  (after the start, a space, a quote, ``=``, ``,`` or ``(``) and ends with a
  host and optional port (so ``image:tag@sha256:digest`` is no credential).

A password holding a space (which breaks the URL for clients, but is written down all
the same) is found when the text is that one URL, or when it stands quoted on one line.

Host names may be non-ASCII (IDN, full-width letters that NFKC folds): they are
taken as written. When in doubt the parser takes more text as password than less:
a masked host name is a nuisance, a shown password is a leak.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# a scheme starts at a token boundary, so a long run of letters is scanned once
_SCHEME = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://")
# A word: no whitespace, but a span quoted on one line ('...' or "...", as reports quote
# values; the quotes at a token's start and end, so an apostrophe opens nothing) is one
# word with its spaces, so a password holding a space is found whole.
# a URL that follows another in one word starts a token (after ',', '=', a quote...): a
# password may hold '://' after its ':'
_NEXT_URL = re.compile(r"(?<=[\s'\"=,(\[{;])[A-Za-z][A-Za-z0-9+.-]{0,31}://")
_WORD = re.compile(r"(?:(?<![^\s=(\[{,:])'[^'\n]*'(?![^\s)\]},;:.])"
                   r"|(?<![^\s=(\[{,:])\"[^\"\n]*\"(?![^\s)\]},;:.])|\S)+")
_AUTHORITY_END = re.compile(r"[/?#]")
# Where a password is looked for: up to the first '/' only. A raw '?' or '#' in a
# password makes clients cut the URL there (the proxy then fails), but the password is
# still written in the value: it is masked all the same.
_USERINFO_END = re.compile(r"/")
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.%]+\]|(?:[\w.-]|[^\x00-\x7f])+)(?::\d{0,5})?")
# after a scheme-less credential's host: the end of the token
# (or prose around it: a sentence's '.' or ':', a '>' or '|' of a quote or table, a backtick)
# (a space too: inside a quoted span, or a value that is one URL with prose after it)
_BARE_HOST_END = re.compile(r"$|[\s/'\",;:)\]}.>|`]")
# after the host of a URL cut short by a space: prose may follow ('...:3128: Go goes')
_SPACED_HOST_END = re.compile(r"[\s/'\",;:)\]}.>|`]")
_TOKEN_START = "'\"=,(<|`"
_LIST_SEPARATORS = ",; \t"
_SPACE = re.compile(r"\s")
# how many URLs that seem to follow one are looked at as possibly part of its password
_MAX_URLS_IN_PASSWORD = 32


@dataclass(frozen=True, slots=True)
class Credential:
    """One ``user:password@host`` in a text; offsets index that text."""

    start: int  # the URL's first character: its scheme, or the user name without one
    end: int  # after the host (and port)
    password_start: int
    password_end: int
    scheme: str  # "" when written without one
    user: str
    password: str
    host: str  # host[:port] as written

    def masked(self, text: str) -> str:
        """The URL as ``text`` holds it, password replaced by ``****``."""
        return text[self.start:self.password_start] + "****" + text[self.password_end:self.end]


def find_credentials(text: str) -> list[Credential]:
    """Every credential in ``text`` that carries a password, in order."""
    if "@" not in text:
        return []
    bare = text.strip()
    if "\n" not in bare and _SCHEME.match(bare):  # a value that is one URL: spaces and all
        start = text.index(bare)
        whole = list(_in_word(text, start, start + len(bare)))
        if whole:
            return whole  # else a URL with prose after it ('http://u:pa ss@proxy .svc')
    found = [c for word in _WORD.finditer(text) if "@" in word.group(0)
             for c in _in_word(text, word.start(), word.end())]
    if "," in bare:  # a list (NO_PROXY-like): each URL in it, spaces and all
        found += [c for start, end in _listed_urls(text) for c in _in_word(text, start, end)]
    if any(ch.isspace() for ch in bare):  # a URL cut short by a space in its password
        found += [c for start, end in _spaced_urls(text) for c in _in_word(text, start, end)]
        found += list(_bare_lines(text))  # 'svc:pa ss@proxy:3128' as a value, no scheme
    return found


# a line's value after a YAML key ('  HTTPS_PROXY: '), a list dash or a shell/env 'KEY='
# (and a diff's '+' or '-': a fix's diff quotes the line)
_LINE_KEY = re.compile(r"[+-]?[ \t]*(?:-[ \t]+)?(?:[\w.-]+:[ \t]+|[\w.]+=)?['\"]?")


def _bare_lines(text: str) -> Iterator[Credential]:
    """On each line, a value that is one scheme-less credential whose password holds a
    space (see :func:`_bare_value`): the whole line, or its value after a key."""
    at = 0
    for line in text.split("\n"):
        if "@" in line and ":" in line:
            key = _LINE_KEY.match(line)
            value_start = at + (key.end() if key else 0)
            value = text[value_start:at + len(line)].rstrip().rstrip("'\"")
            found = _bare_value(text, value_start, value) if value.strip() == value else None
            if found is None and key and key.end():
                found = _bare_value(text, at + len(line) - len(line.lstrip()), line.strip())
            if found is not None:
                yield found
        at += len(line) + 1


def _bare_value(text: str, start: int, bare: str) -> Credential | None:
    """A value that is one scheme-less credential whose password holds a space
    (``svc:pa ss@proxy:3128`` as an ``HTTP_PROXY``): a user name with no space, a ``:``,
    a password that does not start with a space (so ``contact: jdoe@example.com`` is
    none), the last ``@`` and a host ending the value. No client reads it, but the
    password is written down all the same. A value with a scheme is read elsewhere."""
    colon = bare.find(":")
    at = bare.rfind("@")
    if colon <= 0 or at <= colon + 1 or bare[colon + 1].isspace() or _SCHEME.match(bare) or any(
            ch.isspace() or ch in _TOKEN_START for ch in bare[:colon]):
        return None
    if not any(ch.isspace() for ch in bare[colon + 1:at]) or not _HOST.fullmatch(bare, at + 1):
        return None
    inner = bare.find("@", colon + 1, at)
    while inner >= 0:  # 'x:yz@h:1 x:yz@h:1': an '@host' and a space end a userinfo before
        host = _HOST.match(bare, inner + 1, at)
        if host and host.end() < at and bare[host.end()].isspace():
            return None
        inner = bare.find("@", inner + 1, at)
    return Credential(start, start + len(bare), start + colon + 1, start + at, "", bare[:colon],
                      bare[colon + 1:at], bare[at + 1:])


def split_outside_credentials(text: str, separators: str) -> list[str]:
    """``text`` split at each of ``separators`` that is not inside a credential, so a
    password holding a separator (``.svc,http://u:pa,ss@proxy``, a space) stays in its
    URL: a list reader never makes a fragment of a password that no masking can
    recognise. Pieces keep their spaces; empty ones are kept (the caller strips)."""
    spans: list[tuple[int, int]] = []
    for start, stop in sorted((c.start, c.end) for c in find_credentials(text)):
        if spans and start < spans[-1][1]:  # merged: ends then grow with starts
            spans[-1] = (spans[-1][0], max(spans[-1][1], stop))
        else:
            spans.append((start, stop))
    if not spans:
        return re.split(f"[{re.escape(separators)}]", text)
    pieces, at, k = [], 0, 0
    for separator in re.finditer(f"[{re.escape(separators)}]", text):  # linear: spans in order
        i = separator.start()
        while k < len(spans) and spans[k][1] <= i:
            k += 1
        if k < len(spans) and spans[k][0] <= i:
            continue  # inside a credential
        pieces.append(text[at:i])
        at = i + 1
    pieces.append(text[at:])
    return pieces


def _spaced_urls(text: str) -> Iterator[tuple[int, int]]:
    """The spans of URLs cut short by a space in their password, on one line
    (``value: http://u:pa ss@proxy:3128``, or quoted in prose ``for http://u:pa ss@proxy:
    Go goes direct``): a scheme whose authority, up to the space, opens a userinfo
    (``user:``) that is no ``host:port`` and holds no ``@``, up to the last ``@`` on
    that line followed by a host. When unsure, more is taken as password."""
    covered = 0  # the end of the last span: a URL inside it is read with it, not again
    # Found once and reused while the schemes pass them (a long line of URLs is read once):
    # the line's end, the next white space, and a line whose '@'s were all tried (whether
    # an '@' ends a userinfo does not depend on the URL, so a later one on it finds none).
    line_end = space_at = walked = -1
    for m in _SCHEME.finditer(text):
        if m.start() < covered:
            continue
        if line_end < m.end():
            line_end = text.find("\n", m.end())
            line_end = len(text) if line_end < 0 else line_end
        if line_end == walked:
            continue
        if space_at < m.end():
            found_space = _SPACE.search(text, m.end())
            space_at = found_space.start() if found_space else len(text)
        space = min(space_at, line_end)
        if space == line_end:
            continue
        slash = text.find("/", m.end(), space)
        authority = text[m.end():space if slash < 0 else slash]
        if ":" not in authority or _HOST.fullmatch(authority.rpartition("@")[2]):
            continue  # no userinfo, or one an '@host' ends before the space
        walked = line_end
        at = text.rfind("@", space, line_end)
        while at >= 0:
            host = _HOST.match(text, at + 1, line_end)
            if host and host.end() > at + 1 and (host.end() == line_end or _SPACED_HOST_END.match(
                    text, host.end(), line_end)):
                yield m.start(), host.end()
                covered = host.end()
                break
            at = text.rfind("@", space, at)


def _listed_urls(text: str) -> Iterator[tuple[int, int]]:
    """In each line's comma list, the spans of the URLs holding a space
    (``.svc,http://u:pa ss@proxy:3128,10.0.0.0/8``): from a scheme in an item over the
    following items until one ends with ``@host`` (a password may hold ``,`` and ``://``)."""
    items, at = [], 0
    for line in text.split("\n"):
        for piece in line.split(","):
            items.append((at, at + len(piece)))
            at += len(piece) + 1
    i, last_at = 0, text.rfind("@")  # no text copied per item: a list may be long
    while i < len(items):
        start, end = items[i]
        scheme = _SCHEME.search(text, start, end)
        if scheme is None or last_at < scheme.start():
            i += 1
            continue
        j = i
        while not _ends_with_host(text, max(scheme.start(), items[j][0]), items[j][1]) \
                and j + 1 < len(items) and text[items[j][1]] == ",":
            j += 1
        span = text[scheme.start():items[j][1]].rstrip()
        if "@" in span and any(ch.isspace() for ch in span):
            yield scheme.start(), scheme.start() + len(span)
        i = j + 1


def _ends_with_host(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (one list item: a host holds no ``,``) ends (but
    spaces) with ``@`` and a host."""
    stop = end
    while stop > start and text[stop - 1].isspace():
        stop -= 1
    at = text.rfind("@", start, stop)
    host = _HOST.match(text, at + 1, stop) if at >= 0 else None
    return host is not None and host.end() == stop > at + 1


def _in_word(text: str, start: int, end: int) -> Iterator[Credential]:
    """Credentials in ``text[start:end]`` (no whitespace): URLs with a scheme first, and
    between them the scheme-less form."""
    segment = start
    last_at = text.rfind("@", start, end)  # '@' in text[x:end] is last_at >= x, with no copy
    walked = [-1, -1]  # _scheme_in_bare_password's: (segment, '@'s tried up to there)
    for m in _SCHEME.finditer(text, start, end):
        if m.start() < segment:
            continue  # inside the authority of the previous URL
        if m.start() > segment and _scheme_in_bare_password(text, segment, m, end, last_at, walked):
            continue  # 'user:pa=a://ss@host': a password holding '://' starts no URL
        authority_end = _USERINFO_END.search(text, m.end(), end)
        stop = authority_end.start() if authority_end else end
        yield from _bare(text, segment, m.start())
        following = _NEXT_URL.search(text, m.end(), end)  # the next URL is not this one's
        looked = 0
        while following and authority_end and _inside_password(text, m.end(), following, end,
                                                                last_at):
            looked += 1
            # a list of thousands of URLs none of which ends with '@host' (hostile input)
            # was walked once per URL: past a few, the rest is taken as password
            following = (_NEXT_URL.search(text, following.end(), end)
                         if looked < _MAX_URLS_IN_PASSWORD else None)
        limit = following.start() if following else end
        if authority_end and stop < limit and ":" in text[m.end():stop]:
            stop = _past_slash(text, stop, limit, stop)  # a password may hold a raw '/'
        found = _with_scheme(text, m.start(), m.end(), stop)
        if found is not None:
            yield found
        segment = stop
    yield from _bare(text, segment, end)


def _scheme_in_bare_password(text: str, segment: int, scheme: re.Match[str], end: int,
                             last_at: int, walked: list[int]) -> bool:
    """Whether what looks like a URL (``a://``) is inside the password of a scheme-less
    credential that starts before it (``svc:Zq9=a://0Kx7@proxy``, ``proxy:http://u:p@h``):
    an ``@`` follows, and before it, in this word, a user name and ``:`` open a userinfo
    that no ``@host`` has closed yet. A ``:`` with no user name before it (the key of
    ``"httpProxy":"http://..."``) opens none. When unsure, more is taken as password."""
    if last_at < scheme.end():  # no '@' follows
        return False
    if text[scheme.start() - 1] == ":":
        return True
    colon = text.find(":", segment, scheme.start())
    if colon < 0:
        return False
    user_start = max(text.rfind(c, segment, colon) for c in _TOKEN_START) + 1
    if max(user_start, segment) >= colon:
        return False
    # the '@'s before an earlier scheme of this segment closed nothing (or it would have
    # ended the segment), and a later bound does not change that: each is tried once
    at = text.find("@", max(colon, walked[1]) if walked[0] == segment else colon, scheme.start())
    while at >= 0:  # a complete 'user:pw@host' before the scheme ends that userinfo
        host = _HOST.match(text, at + 1, scheme.start())
        if host and host.end() > at + 1 and (host.end() == scheme.start() or _BARE_HOST_END.match(
                text, host.end(), scheme.start())) and text[host.end():host.end() + 1] != "/":
            # ('@host/' may be inside a password holding a raw '/', as with a scheme); a URL
            # after it with a user name but no password of its own is inside this password,
            # as with a scheme ('svc:Zq9@abc,http://%40Kx7@proxy'): more is taken as password
            stop = _USERINFO_END.search(text, scheme.end(), end)
            following = text[scheme.end():stop.start() if stop else end]
            if "@" in following and ":" not in following.rpartition("@")[0]:
                walked[:] = [segment, at]  # the '@'s before this one closed nothing
                return True
            return False

        at = text.find("@", at + 1, scheme.start())
    walked[:] = [segment, scheme.start()]
    return True


def _inside_password(text: str, authority: int, following: re.Match[str], end: int,
                     last_at: int) -> bool:
    """Whether a URL that seems to follow (``http://u:p=a://b@proxy``) is part of this
    one's password: this one has a ``:`` but no complete ``@host`` before it (or is
    joined to it by no list separator, or the next has no password of its own), and an
    ``@`` comes later. When unsure, more is taken as password."""
    if last_at < following.end():  # no '@' follows
        return False
    before = text[authority:following.start() - 1]
    head = before.partition("/")[0]
    if ":" not in head:
        return False
    if "@" not in before or text[following.start() - 1] not in _LIST_SEPARATORS:
        return True
    closing = before.rpartition("@")[2].partition("/")[0]
    if not closing or not _HOST.fullmatch(closing):
        # 'jdoe@corp.example.com:Zq9;http://:bKx7@proxy', ':Zq9;http://:@;http://:K@h':
        # no host (and port) follows the last '@' before, so it closed nothing: the last
        # '@' followed by a host ends the userinfo
        return True
    next_stop = _USERINFO_END.search(text, following.end(), end)
    next_userinfo = text[following.end():next_stop.start() if next_stop else end]
    return ":" not in next_userinfo.rpartition("@")[0]


def _past_slash(text: str, slash: int, end: int, default: int) -> int:
    """Where a userinfo holding a raw ``/`` ends (``http://u:pa/ss@proxy:3128``, a
    generated password pasted unencoded): after the last later ``@`` that a host ending
    the token follows. Clients read ``u:pa`` as host and port and fail, but the password
    is still written down, so it is masked whole; ``default`` when there is none."""
    at = text.rfind("@", slash, end)  # the last such '@': a password may hold '@' and '/'
    while at >= 0:
        host = _HOST.match(text, at + 1, end)
        if host and host.end() > at + 1 and _BARE_HOST_END.match(text, host.end(), end):
            return host.end()
        at = text.rfind("@", slash, at)
    return default


def _with_scheme(text: str, start: int, authority: int, stop: int) -> Credential | None:
    at = text.rfind("@", authority, stop)
    if at < 0:
        return None
    colon = text.find(":", authority, at)
    if colon < 0 or colon + 1 == at:
        return None  # a user name only, or an empty password: nothing to hide
    host = _HOST.match(text, at + 1, stop)
    host_end = host.end() if host else at + 1
    return Credential(start, host_end, colon + 1, at, text[start:authority - 3],
                      text[authority:colon], text[colon + 1:at], text[at + 1:host_end])


def _bare(text: str, start: int, end: int) -> Iterator[Credential]:
    """At most one scheme-less credential in ``text[start:end]``: the last ``@`` followed
    by a host that ends the token, and the first ``:`` before it."""
    if "@" not in text[start:end]:
        return
    at = text.rfind("@", start, end)
    while at >= 0:
        host = _HOST.match(text, at + 1, end)
        if host and _BARE_HOST_END.match(text, host.end(), end) and host.end() > at + 1:
            break
        at = text.rfind("@", start, at)
    if at < 0 or host is None:
        return
    colon = text.find(":", start, at)
    if colon < 0 or colon + 1 == at:
        return
    user_start = max(text.rfind(c, start, colon) for c in _TOKEN_START) + 1
    user_start = max(user_start, start)
    yield Credential(user_start, host.end(), colon + 1, at, "", text[user_start:colon],
                     text[colon + 1:at], text[at + 1:host.end()])


def without_userinfo(url: str) -> str:
    """``url`` with its whole userinfo (user and password) removed: what may be given to
    a URL parser whose error messages quote the network location."""
    m = _SCHEME.match(url.strip())
    text = url.strip()
    if m is None:
        at = text.rfind("@")
        return text[at + 1:] if at >= 0 and ":" in text[:at] else text
    stop = _AUTHORITY_END.search(text, m.end())
    stop_at = stop.start() if stop else len(text)
    at = text.rfind("@", m.end(), stop_at)
    return text if at < 0 else text[:m.end()] + text[at + 1:]
