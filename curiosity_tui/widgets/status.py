"""Status glyphs, words and colours: every status reads without colour (glyph + word)."""

from __future__ import annotations

STATUS_GLYPH: dict[str, str] = {
    "open": "○",
    "dormant": "◌",
    "closed": "●",
    "archived": "▣",
    "merged": "⇢",
}
STATUS_STYLE: dict[str, str] = {
    "open": "green",
    "dormant": "yellow dim",
    "closed": "blue",
    "archived": "bright_black",
    "merged": "magenta",
}
CHANGE_TAG: dict[str, tuple[str, str]] = {
    "new": ("NEW", "bold black on green"),
    "changed": ("CHG", "bold black on yellow"),
}
REQ_STYLE: dict[str, str] = {
    "satisfied": "green",
    "not_satisfied": "red",
    "unchecked": "yellow",
    "waived": "bright_black",
}
EVIDENCE_STYLE: dict[str, str] = {"verified": "green", "proposed": "yellow"}


def glyph(status: str) -> str:
    return STATUS_GLYPH.get(status, "?")
