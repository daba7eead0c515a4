"""Text as HTML/SVG character data: every value a report shows passes through here.

Object names, messages and evidence come from the scanned input, which an
attacker may write, so ``<``, ``&`` and quotes are escaped, and characters a
reader could not see or that reorder the text around them (C0/C1 controls,
bidirectional overrides) are shown as ``\\xNN``/``\\uNNNN`` instead.
"""

from __future__ import annotations

import html

from hcpscan.core.redact import escape_controls, shown


def escape_html(value: object, *, keep_layout: bool = False) -> str:
    """``value`` as text safe inside an element or a quoted attribute; newlines and
    carriage returns are shown as ``\\n``/``\\r`` too, unless ``keep_layout`` (for our
    own multi-line text in a ``<pre>``, such as a rule's example YAML)."""
    return html.escape(escape_controls(str(value), keep_layout=keep_layout), quote=True)


def shorten(text: str, limit: int) -> str:
    """At most ``limit`` characters, an ellipsis marking a cut (for SVG labels,
    which do not wrap; the full text stays in the element's title)."""
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def visible(value: object) -> str:
    """``value`` on one line with its invisible characters shown (for line-based output)."""
    return " ".join(shown(value).split())  # escaped first: a newline shows as \\n
