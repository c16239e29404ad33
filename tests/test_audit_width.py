"""Audit rows use the width (issue 28, item 10): a finding's detail and its trail's event data
were cut at 60 and 90 columns while half a wide screen stayed empty."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import Tree

from curiosity_tui.app import make_app
from curiosity_tui.screens.audit import AuditScreen

ROOT = Path(__file__).resolve().parents[1]
EPISODE = ROOT / "ledgers" / "episode-grabe-pilot01"


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def _widest(tmp_path: Path, width: int) -> tuple[int, int]:
    ledger = tmp_path / f"w{width}" / EPISODE.name
    shutil.copytree(EPISODE, ledger, ignore=shutil.ignore_patterns("writer.lock"))
    app = make_app(ledger.parent, ledger=ledger)
    async with app.run_test(size=(width, 45)) as pilot:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        assert isinstance(app.screen, AuditScreen)
        tree = app.screen.query_one(Tree)
        rows = list(tree.root.children)
        for row in rows:
            row.expand()
        await pilot.pause()
        heads = max(len(r.label.plain) for r in rows)
        trail = max(len(c.label.plain) for r in rows for c in r.children)
    return heads, trail


async def test_rows_widen_with_the_screen(tmp_path: Path) -> None:
    narrow = await _widest(tmp_path, 120)
    wide = await _widest(tmp_path, 220)
    assert wide[0] > narrow[0] and wide[1] > narrow[1]
    assert wide[1] > 140  # trail lines were cut at 90 columns of data whatever the width
    assert narrow[1] <= 120  # and still fit a narrow screen
