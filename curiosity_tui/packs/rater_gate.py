"""Who may rate a pack: the expected raters it was built for, and those added since by a
logged ``pack add-rater`` (issue 25, item 6; decision 406).

A copy of one rater's file under a new name, its timestamps shifted, moved Fleiss' kappa
from -0.217 to 0.252: a rater the pack never expected must be added on the record first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.rating import RatingError, rater_group


def added_raters(entries: Sequence[Any]) -> set[str]:
    """Raters added to the pack after its build by ``pack add-rater``: the pack log's
    ``rater_added`` entries (``entries``: the checked log)."""
    return {str(e.data.get("rater")) for e in entries if e.kind == "rater_added"}


def refuse_unexpected_raters(
    pack: Pack, files: dict[str, tuple[Path, list[Any]]], entries: Sequence[Any]
) -> None:
    """A human rater's file in a pack that names its expected raters must be one of them, or
    added by a logged ``pack add-rater`` (decision 406). Model raters (``model:NAME``) are
    reported apart and never pooled; they need no entry."""
    expected = set(pack.manifest.expected_raters)
    if not expected:
        return
    strangers = [r for r in files if r not in expected and rater_group(r) == "human"]
    if not strangers:
        return
    allowed = expected | added_raters(entries)
    for r in sorted(strangers):
        if r not in allowed:
            raise RatingError(
                f"{files[r][0]}: rater {r!r} is not among the pack's expected raters "
                f"({', '.join(sorted(expected))}); `curiosity-tui pack add-rater "
                f"{pack.path} {r} --by WHO` adds one, in the pack log"
            )
