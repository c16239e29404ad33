"""A rater's unsaved drafts, kept across a kill (decision 212).

``ratings/.NAME.drafts.json`` holds, per item, the categories, grounds and quotes typed but
not yet saved, and the item being edited. The rating screen rewrites it atomically when a
draft changes and deletes it once no draft is left. It is the rater's scratch pad, not a
rating: a hidden ``.json`` file, so nothing that reads ratings (``ratings/*.jsonl``:
agreement, unblind, completeness) ever sees it, and ``pack export`` never copies it.

A damaged drafts file never stops a rater: it is set aside as ``….damaged`` (kept, not
deleted) and rating starts without drafts. Entries for items or categories the pack does
not have are dropped on reading.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from curiosity_tui.atomic import atomic_write_bytes, fsync_dir
from curiosity_tui.packs.pack import RATINGS_DIR, Pack
from curiosity_tui.packs.rating import validate_rater_name

__all__ = ["DraftFile", "DraftStore", "ItemDraft", "drafts_path"]


class ItemDraft(BaseModel):
    categories: dict[str, str | None] = Field(default_factory=dict)
    grounds: dict[str, str] = Field(default_factory=dict)
    quotes: dict[str, list[str]] = Field(default_factory=dict)


class DraftFile(BaseModel):
    format: Literal["curiosity-tui-drafts/1"] = "curiosity-tui-drafts/1"
    pack_id: str
    rater: str
    current: str | None = Field(default=None, description="the item being edited")
    drafts: dict[str, ItemDraft] = Field(default_factory=dict)


def drafts_path(packdir: Path, rater: str) -> Path:
    return Path(packdir) / RATINGS_DIR / f".{validate_rater_name(rater)}.drafts.json"


def _clean(pack: Pack, d: ItemDraft) -> ItemDraft:
    """Only the pack's questions and categories survive."""
    out = ItemDraft()
    for q in pack.scheme.questions:
        cat = d.categories.get(q.id)
        out.categories[q.id] = cat if cat in q.category_ids else None
        out.grounds[q.id] = d.grounds.get(q.id, "")
        out.quotes[q.id] = list(d.quotes.get(q.id, []))[: q.max_quotes]
    return out


class DraftStore:
    """Read and write one rater's drafts file in one pack."""

    def __init__(self, pack: Pack, rater: str) -> None:
        self.pack = pack
        self.rater = rater
        self.path = drafts_path(pack.path, rater)
        self.note = ""  # one line for the rater when the file had to be set aside
        self._written: bytes | None = None

    def load(self) -> DraftFile:
        empty = DraftFile(pack_id=self.pack.manifest.pack_id, rater=self.rater)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return empty
        try:
            got = DraftFile.model_validate_json(raw)
            if got.pack_id != empty.pack_id or got.rater != self.rater:
                raise ValueError("another pack's or rater's drafts")
        except (ValidationError, ValueError):
            aside = self.path.with_name(self.path.name + ".damaged")
            try:
                os.replace(self.path, aside)
                fsync_dir(self.path.parent)
            except OSError:
                aside = self.path
            self.note = f"{self.path} was damaged: kept as {aside.name}; no drafts restored"
            return empty
        self._written = raw
        drafts = {i: _clean(self.pack, d) for i, d in got.drafts.items() if i in self.pack.items}
        current = got.current if got.current in drafts else None
        return DraftFile(pack_id=got.pack_id, rater=self.rater, current=current, drafts=drafts)

    def save(self, drafts: dict[str, ItemDraft], current: str | None) -> None:
        """Write the drafts (only when they changed); no drafts: the file goes."""
        if not drafts:
            if self._written is not None or self.path.exists():
                self.path.unlink(missing_ok=True)
            self._written = None
            return
        body = DraftFile(
            pack_id=self.pack.manifest.pack_id,
            rater=self.rater,
            current=current if current in drafts else None,
            drafts=drafts,
        )
        data = (body.model_dump_json(indent=1) + "\n").encode("utf-8")
        if data != self._written:
            atomic_write_bytes(self.path, data, mode=0o600, sync=False)
            self._written = data
