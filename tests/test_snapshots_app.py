"""SVG snapshots of each app screen on a deterministic example workspace (cursor blink off).

Update after an intended change with ``pytest tests/test_snapshots_app.py --snapshot-update``.
The workspace is built in a fresh home directory (the ``home`` fixture), so the path shown on
screen is ``~/example`` on every run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_fixtures import build_workspace
from textual.widgets import Input, TextArea

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger

SIZE = (130, 40)


@pytest.fixture(scope="module")
def ws(home: Path) -> Path:
    return build_workspace(home / "example")


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    for w in pilot.app.screen.query(Input):
        w.cursor_blink = False
    for w in pilot.app.screen.query(TextArea):
        w.cursor_blink = False
    await pilot.pause()


def test_snapshot_workspace(snap_compare, ws: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(ws), terminal_size=SIZE, run_before=settle)


def test_snapshot_browser_markup_node(snap_compare, ws: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("down", "down", "down")  # q4: markup and control characters
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_snapshot_browser_after_session_1(snap_compare, ws: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("left_curly_bracket")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_snapshot_session_input(snap_compare, ws: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("left_square_bracket", "v")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_snapshot_audit(snap_compare, ws: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_snapshot_downgrades_and_form(snap_compare, ws: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(ws, curator_name="snap")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_snapshot_curator(snap_compare, ws: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from curiosity_tui.screens.curator import CuratorScreen

    copy = tmp_path / "curated"
    shutil.copytree(
        ws / "ledgers" / "example-pilot-02", copy, ignore=shutil.ignore_patterns("writer.lock")
    )
    led = Ledger.open(copy, write=True)
    app = make_app(ws, curator_name="snap")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.app.push_screen(CuratorScreen(led, 3, "human:snap", lambda: None))
        await settle(pilot)

    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run)
    finally:
        led.close()


def test_snapshot_help(snap_compare, ws: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)
