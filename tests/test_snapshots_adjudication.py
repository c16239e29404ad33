"""SVG snapshot of the adjudication screen: a disagreement open, raters side by side.

Update after an intended change with ``pytest tests/test_snapshots_adjudication.py
--snapshot-update``. The pack is the shipped example, copied to a fixed path and rated by two
raters, so that ids and paths on screen do not vary."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input

from curiosity_tui.app import AdjudicationApp
from tests.adjudication_fixtures import rate_two

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("adjudication") / "example-pilot-01"
    shutil.copytree(ROOT / "packs" / "example-pilot-01", dest)
    rate_two(dest)
    return dest


def test_snapshot_adjudication_form(snap_compare, pack: Path) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.pause()
        await pilot.press("enter", "f", *"section three starts over")
        for w in pilot.app.screen.query(Input):
            w.cursor_blink = False
        await pilot.pause()

    app = AdjudicationApp(pack, "human:cy")
    assert snap_compare(app, terminal_size=(160, 50), run_before=run)
