"""Show model and node text literally: never as markup, never as terminal control.

Every string that came from a model, a ledger or a pack goes through :func:`clean` (or
:func:`literal`, which returns a Rich ``Text`` built without markup parsing). Control
characters become their visible Unicode "control pictures" (ESC -> ␛, BEL -> ␇, NUL -> ␀),
so an escape sequence can neither style nor move the cursor, and the reader still sees that
something was there.
"""

from __future__ import annotations

import re

from rich.console import JustifyMethod
from rich.style import Style
from rich.text import Text

# C0 controls except newline and tab, DEL, C1 controls, and bidi overrides/isolates that can
# reorder what is displayed.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def _picture(m: re.Match[str]) -> str:
    ch = m.group(0)
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"\\u{code:04x}"


def clean(text: object, *, oneline: bool = False, tab: int = 4) -> str:
    """``text`` with control characters made visible; newlines kept unless ``oneline``."""
    s = str(text) if text is not None else ""
    s = s.replace("\r\n", "\n").replace("\t", " " * tab)
    s = _CONTROL.sub(_picture, s)
    if oneline:
        s = " ".join(s.split("\n"))
    return s


def literal(text: object, style: str | Style = "", *, oneline: bool = False) -> Text:
    """A ``Text`` whose content is exactly ``clean(text)``; square brackets stay brackets."""
    return Text(clean(text, oneline=oneline), style=style, no_wrap=False, end="")


def short(text: object, width: int) -> str:
    """One line, at most ``width`` characters (ellipsis when cut)."""
    s = clean(text, oneline=True)
    return s if len(s) <= width else s[: max(0, width - 1)] + "…"


def lit(text: object, style: str = "", *, justify: JustifyMethod | None = None) -> Text:
    """One line of ledger text for a table cell, literally (no markup, controls visible)."""
    return Text(clean(text, oneline=True), style=style, end="", justify=justify)


def num(text: str, style: str = "") -> Text:
    """A right-aligned figure for a table cell."""
    return Text(text, style=style, justify="right", end="")
