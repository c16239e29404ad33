"""Show model and node text literally: never as markup, never as terminal control.

Every string that came from a model, a ledger or a pack goes through :func:`clean` (or
:func:`literal`, which returns a Rich ``Text`` built without markup parsing). Control
characters become their visible Unicode "control pictures" (ESC -> ␛, BEL -> ␇, NUL -> ␀),
so an escape sequence can neither style nor move the cursor, and the reader still sees that
something was there. Zero-width and bidi formatting characters (ZWSP, ZWJ, RLO, isolates,
BOM, ...) are shown as ``⟨U+200B⟩`` so hidden or reordered text is visible
(:mod:`curiosity_tui.textsafe`).
"""

from __future__ import annotations

from rich.console import JustifyMethod
from rich.style import Style
from rich.text import Text

from curiosity_tui.textsafe import escape_controls, show_invisible


def clean(text: object, *, oneline: bool = False, tab: int = 4) -> str:
    """``text`` with control characters made visible; newlines kept unless ``oneline``."""
    s = str(text) if text is not None else ""
    s = s.replace("\r\n", "\n").replace("\t", " " * tab)
    s = show_invisible(escape_controls(s))
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
