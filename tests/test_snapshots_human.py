"""SVG snapshot of the human session screen (cursor blink off), on a C ledger whose session 1 a
model took against the scripted server, built at a fixed path so the screen does not vary.

Update after an intended change with ``pytest tests/test_snapshots_human.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from human_fixtures import build_after_model_session
from test_app_human_session import FIRST, SIZE, Host
from textual.widgets import Input

from curiosity_tui.ledger import Ledger
from tests.keyburst import burst


@pytest.fixture(scope="module")
def ledger_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_after_model_session(tmp_path_factory.mktemp("human") / "relay")


def test_snapshot_human_session(snap_compare, ledger_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.pause()
        await burst(pilot, FIRST)
        for w in pilot.app.screen.query(Input):
            w.cursor_blink = False
        await pilot.pause()

    with Ledger.open(ledger_path, write=True) as led:
        assert snap_compare(Host(led), terminal_size=SIZE, run_before=run)
