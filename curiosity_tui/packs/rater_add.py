"""``pack add-rater``: one more rater than the pack was built for, on the record (the pack
log's ``rater_added`` entry; decision 406)."""

from __future__ import annotations

from pathlib import Path

from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.rater_gate import added_raters
from curiosity_tui.packs.rating import RatingError, validate_rater_name
from curiosity_tui.packs.unblind import PackLog


def add_rater(packdir: str | Path, rater: str, *, by: str) -> int:
    """Log ``rater_added`` for ``rater``; returns the entry's seq. Refused for an expected or
    already added rater (nothing logged)."""
    pack = Pack.open(packdir)
    pack.refuse_export("pack add-rater")
    name = validate_rater_name(rater)
    log = PackLog(pack.path)
    if name in pack.manifest.expected_raters or name in added_raters(log.entries()):
        raise RatingError(f"{pack.path}: rater {name!r} is already expected; nothing logged")
    return log.append("rater_added", by, {"rater": name}).seq
