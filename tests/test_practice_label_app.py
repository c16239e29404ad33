"""The practice label in the app (decision 442): the workspace row of a scripted ledger or a
pack built from scripted runs says "scripted"; the analysis screen over scripted runs starts
with the banner and titles its verdict "over SCRIPTED replies"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from curiosity_tui.analysis.practice import SCRIPTED_BANNER
from curiosity_tui.app import AnalysisApp, make_app
from curiosity_tui.packs.build import build_pack, material_from_ledger
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.screens.analysis import AnalysisScreen

ROOT = Path(__file__).resolve().parents[1]
SCRIPTED = ROOT / "ledgers" / "example-C+cur-pilot02"
REAL = ROOT / "ledgers" / "real-gemma3-270m-C-cur-pilot02"


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(SCRIPTED, ws / "ledgers" / "practice-run")
    shutil.copytree(REAL, ws / "ledgers" / "model-run")
    mat = material_from_ledger(ws / "ledgers" / "practice-run")
    build_pack([mat], load_scheme("pilot-02"), ws / "packs" / "p1", seed=1)
    return ws


async def test_workspace_rows_say_scripted(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    app = make_app(ws)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        ledgers = app.screen.query_one("#ledgers", DataTable)
        names = {str(ledgers.get_row_at(i)[0]) for i in range(ledgers.row_count)}
        assert "practice-run scripted" in names and "model-run" in names
        packs = app.screen.query_one("#packs", DataTable)
        assert str(packs.get_row_at(0)[0]) == "p1 scripted"
        await pilot.press("slash", *"scripted", "enter")  # the filter finds practice
        await settle(pilot)
        assert ledgers.row_count == 1


async def test_analysis_screen_over_scripted_runs_says_so(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(SCRIPTED, runs / "practice-run")
    app = AnalysisApp([runs])
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnalysisScreen) and screen.error is None
        status = str(screen.query_one("#analysis-status", Static).render())
        assert status.startswith(SCRIPTED_BANNER)


def test_agreement_and_unblind_over_a_scripted_pack_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv
    import io
    import json

    from curiosity_tui.cli import main

    ws = _workspace(tmp_path)
    pack = str(ws / "packs" / "p1")
    capsys.readouterr()
    assert main(["agreement", pack, "--boot", "10"]) == 0
    assert capsys.readouterr().out.startswith(SCRIPTED_BANNER)
    assert main(["agreement", pack, "--boot", "10", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["replies"] == "scripted"
    assert main(["unblind", pack, "--force", "--by", "coord"]) == 0
    assert capsys.readouterr().out.startswith(SCRIPTED_BANNER)
    assert main(["unblind", pack, "--force", "--by", "coord", "--csv", "-"]) == 0
    header = next(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert header[-1] == "replies"  # no ratings yet: the column is there, rows come with them
