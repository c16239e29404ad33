"""SVG snapshots of the rating screen with the rater's guide, at 160×50 and 100×30.

Update after an intended change with ``pytest tests/test_snapshots_rating.py --snapshot-update``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input

from curiosity_tui.app import RatingApp

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("rating") / "example-pilot-02"
    shutil.copytree(ROOT / "packs" / "example-pilot-02", dest)
    return dest


async def _settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    for w in pilot.app.screen.query(Input):
        w.cursor_blink = False
    await pilot.pause()


@pytest.mark.parametrize("size", [(160, 50), (100, 30)], ids=["160x50", "100x30"])
def test_snapshot_rating_with_guide(snap_compare, pack: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await _settle(pilot)

    assert snap_compare(RatingApp(pack, "snap"), terminal_size=size, run_before=run)


def test_snapshot_rating_item_list(snap_compare, pack: Path) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await _settle(pilot)
        await pilot.press("ctrl+l")
        await _settle(pilot)

    assert snap_compare(RatingApp(pack, "snap"), terminal_size=(160, 50), run_before=run)
