"""Narrow terminals and identity (issue 13, item 8): at 100x30 the key columns and ``? Help``
stay in view; ``open --curator-name`` names who decides; the downgrade pane keeps the decided
proposal; ``downgrades -h`` prints help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from app_fixtures import build_workspace
from textual.widgets import DataTable, Footer, Static

from curiosity_tui.app import make_app
from curiosity_tui.screens.decide import DecideScreen
from curiosity_tui.screens.downgrades import DowngradesScreen

ROOT = Path(__file__).resolve().parents[1]
NARROW = (100, 30)


@pytest.fixture(scope="module")
def ws(home: Path) -> Path:
    return build_workspace(home / "example", markup=False)


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def footer_first(app) -> str:  # type: ignore[no-untyped-def]
    footer = app.screen.query_one(Footer)
    keys = [k for k in footer.children if getattr(k, "description", None)]
    return str(keys[0].description) if keys else ""


async def test_key_columns_and_help_in_view_at_100x30(ws: Path) -> None:
    app = make_app(ws)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#ledgers", DataTable)
        labels = [str(c.label) for c in table.ordered_columns]
        assert labels[:4] == ["ledger", "dg pend", "audit", "state"]
        right = sum(c.get_render_width(table) for c in table.ordered_columns[:4])
        assert right <= NARROW[0]
        assert footer_first(app) == "Help"
        for key in ("enter", "A", "escape", "d"):  # browser, audit, back, downgrades
            await pilot.press(key)
            await settle(pilot)
            if key != "escape":
                assert footer_first(app) == "Help", type(app.screen).__name__
            if key == "A":
                await pilot.press("escape")
                await settle(pilot)


def test_snapshot_workspace_100x30(snap_compare, ws: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(ws), terminal_size=NARROW, run_before=settle)


async def test_downgrade_pane_keeps_the_decided_proposal(ws: Path) -> None:
    app = make_app(ws, curator_name="dana")
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        await pilot.press("down", "d")  # example-pilot-02
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DowngradesScreen)
        status = str(screen.query_one("#dg-status", Static).render())
        assert "you decide as human:dana" in status
        await pilot.press("x")
        assert isinstance(app.screen, DecideScreen)
        await pilot.press(*"The regional studies were never looked for.", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, DowngradesScreen) and not screen.pending
        detail = str(screen.query_one("#dg-detail-body", Static).render())
        assert "Just decided" in detail and "d1" in detail and "reject by human:dana" in detail
        assert "The regional studies were never looked for." in detail


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "curiosity_tui", *argv],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), **(env or {})},
        timeout=60,
    )


def test_downgrades_help() -> None:
    for flag in ("-h", "--help"):
        r = _cli("downgrades", flag)
        assert r.returncode == 0 and "usage: curiosity-tui downgrades" in r.stdout
        assert "decide" in r.stdout and r.stderr == ""


def test_open_curator_name_is_checked(tmp_path: Path) -> None:
    r = _cli("open", str(tmp_path), "--curator-name", "two words")
    assert r.returncode == 2 and "must be one non-empty word" in r.stderr
    assert r.stderr.strip().count("\n") == 0
    r = _cli("open", str(tmp_path), env={"CURIOSITY_CURATOR": " "})
    assert r.returncode == 2 and "--curator-name" in r.stderr
    assert "--curator-name" in _cli("open", "-h").stdout


def test_the_workspace_path_is_shown_under_home_as_tilde(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curiosity_tui.screens.workspace import shown_root

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    assert shown_root(home / "lab" / "ws") == "~/lab/ws"
    assert shown_root(home) == "~"
    assert shown_root(tmp_path / "homework") == str(tmp_path / "homework")  # not a prefix match
    assert shown_root(tmp_path / "elsewhere") == str(tmp_path / "elsewhere")
    monkeypatch.setenv("HOME", "/")  # a home at the root: paths stay as they are
    assert shown_root(tmp_path / "ws") == str(tmp_path / "ws")
