"""Text that came from a model, made safe to store and to show. The bottom floor: imports
nothing from the package.

- :func:`replace_unstorable`: lone surrogates (U+D800..U+DFFF, which a JSON ``\\ud800``
  escape can carry but UTF-8 cannot encode) become U+FFFD; the count is returned so the
  caller can record that something was replaced.
- :func:`escape_controls`: C0/C1 control characters and DEL made visible (ESC -> ␛, BEL ->
  ␇, NUL -> ␀, C1 -> ``\\u009b``), so an escape sequence can neither style, move the
  cursor nor set a window title. Newline and tab are kept.
- :func:`show_invisible`: zero-width and bidi formatting characters shown as ``⟨U+200B⟩``,
  so hidden or reordered text is seen for what it is.
"""

from __future__ import annotations

import re
from typing import Any

#: what UTF-8 cannot encode
_SURROGATE = re.compile("[\ud800-\udfff]")
#: what in a JSON text can decode to a lone surrogate: one itself, or a \uD800-\uDFFF escape
#: (matched case-blind; an escaped pair, which decodes to one character, and an escaped
#: backslash before "u" are matched too, so the test errs only towards walking)
_SURROGATE_SOURCE = re.compile("[\ud800-\udfff]|\\\\u[dD][89abcdefABCDEF]")
#: C0 controls except newline and tab, DEL, C1 controls
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
#: zero-width characters, bidi marks, embeddings, overrides and isolates, invisible operators,
#: the byte-order mark / zero-width no-break space, soft hyphen, Arabic letter mark
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)

REPLACEMENT = "\ufffd"


def replace_unstorable(text: str) -> tuple[str, int]:
    """``text`` with lone surrogates replaced by U+FFFD, and how many were replaced."""
    return _SURROGATE.subn(REPLACEMENT, text)


def _picture(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """Control characters (not newline or tab) as visible pictures; lone surrogates as
    ``\\udXXX`` (they cannot be written to a UTF-8 terminal at all)."""
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return _CONTROL.sub(_picture, text)


def show_invisible(text: str) -> str:
    """Zero-width and bidi formatting characters as ``⟨U+XXXX⟩``."""
    return _INVISIBLE.sub(lambda m: f"\u27e8U+{ord(m.group(0)):04X}\u27e9", text)


def terminal_safe(text: str) -> str:
    """Both: what ``ledger render`` writes to a terminal unless ``--raw``."""
    return show_invisible(escape_controls(text))


def replace_unstorable_in(value: Any) -> tuple[Any, int]:
    """:func:`replace_unstorable` over every string (keys too) of parsed JSON."""
    if isinstance(value, str):
        return replace_unstorable(value)
    if isinstance(value, list):
        out: list[Any] = []
        total = 0
        for v in value:
            clean, n = replace_unstorable_in(v)
            out.append(clean)
            total += n
        return out, total
    if isinstance(value, dict):
        d: dict[Any, Any] = {}
        total = 0
        for k, v in value.items():
            ck, nk = replace_unstorable_in(k)
            cv, nv = replace_unstorable_in(v)
            d[ck] = cv
            total += nk + nv
        return d, total
    return value, 0


def replace_unstorable_in_json(value: Any, source: str) -> tuple[Any, int]:
    """:func:`replace_unstorable_in` of ``value``, which ``json.loads`` parsed from ``source``
    (or from a part of it). A parsed string can hold a lone surrogate only where ``source``
    holds one or a ``\\uD800``-``\\uDFFF`` escape; without either the walk changes nothing
    and is skipped (``value`` is returned as it is, not copied)."""
    if _SURROGATE_SOURCE.search(source) is None:
        return value, 0
    return replace_unstorable_in(value)
