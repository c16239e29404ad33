"""Flags: a rater's note to the coordinator about one item ("section 2 looks cut off").

Flags live apart from ratings, in ``flags/NAME.jsonl`` beside ``ratings/`` — never in a
ratings file, so agreement, unblinding and other raters never read them. Each flag is one
appended record; the latest record for an item wins and an empty note withdraws the flag.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from curiosity_tui.clock import utc_now_milli
from curiosity_tui.packs.pack import atomic_write_bytes
from curiosity_tui.packs.rating import RatingError, normalise_ws, validate_rater_name

__all__ = ["FLAGS_DIR", "FlagRecord", "FlagStore", "flags_path"]

FLAGS_DIR = "flags"


class FlagRecord(BaseModel):
    pack_id: str
    item: str
    rater: str
    ts: str
    note: str


def flags_path(packdir: Path, rater: str) -> Path:
    return Path(packdir) / FLAGS_DIR / f"{validate_rater_name(rater)}.jsonl"


class FlagStore:
    """One rater's flags on one pack."""

    def __init__(self, packdir: str | Path, rater: str, pack_id: str) -> None:
        self.path = flags_path(Path(packdir), rater)
        self.rater = rater
        self.pack_id = pack_id
        self.records: list[FlagRecord] = self._read()

    def _read(self) -> list[FlagRecord]:
        if not self.path.exists():
            return []
        out: list[FlagRecord] = []
        for lineno, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(FlagRecord.model_validate_json(line))
            except (ValidationError, json.JSONDecodeError) as err:
                raise RatingError(f"{self.path}:{lineno}: damaged flag record") from err
        return out

    def current(self) -> dict[str, str]:
        """item → note, for items flagged now (a withdrawn flag is absent)."""
        out: dict[str, str] = {}
        for rec in self.records:
            if rec.note:
                out[rec.item] = rec.note
            else:
                out.pop(rec.item, None)
        return out

    def set(self, item: str, note: str) -> FlagRecord:
        """Flag ``item`` with ``note`` (one line); an empty note withdraws the flag."""
        rec = FlagRecord(
            pack_id=self.pack_id,
            item=item,
            rater=self.rater,
            ts=utc_now_milli(),
            note=normalise_ws(note),
        )
        records = [*self._read(), rec]
        body = "".join(r.model_dump_json() + "\n" for r in records)
        atomic_write_bytes(self.path, body.encode("utf-8"), mode=0o600)
        self.records = records
        return rec
