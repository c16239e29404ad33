"""Markdown tables for ``report`` (decision 208): pipe tables whose cells cannot break them.

A cell is escaped so that whatever it holds — a configuration name, an amendment's reason,
model text — renders as that text inside its cell: ``|`` and the characters Markdown acts on
are backslash-escaped (an ``_`` between letters or digits is left alone: CommonMark never
reads it as emphasis), ``<`` ``>`` ``&`` become entities (no raw HTML), and line breaks
become one space (a pipe table row is one line). Control characters are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["md_cell", "md_table"]

#: characters that Markdown (CommonMark + GFM tables) may act on inside a cell
_ESCAPED = set("\\|`*_[]#!~")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def md_cell(text: object) -> str:
    """``text`` as one table cell's content."""
    flat = " ".join(str(text).split())
    out: list[str] = []
    for i, ch in enumerate(flat):
        if ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif ch == "_" and _intraword(flat, i):
            out.append(ch)  # snake_case: an intraword "_" never opens emphasis
        elif ch in _ESCAPED:
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
    return "".join(out)


def _intraword(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def md_table(header: Sequence[object], rows: Sequence[Sequence[object]]) -> list[str]:
    """A pipe table: header, delimiter row, one line a row; every cell escaped."""
    width = len(header)

    def line(cells: Sequence[object]) -> str:
        if len(cells) != width:
            raise ValueError(f"table row has {len(cells)} cells, the header {width}")
        return "| " + " | ".join(md_cell(c) for c in cells) + " |"

    return [line(header), "|" + "---|" * width, *(line(r) for r in rows)]
