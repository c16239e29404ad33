"""Audit, downgrades and pack screens, and the workspace domain (running, sort, filter)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_fixtures import build_workspace
from textual.widgets import DataTable, Static, Tree

from curiosity_tui import workspace_scan as wsmod
from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger
from curiosity_tui.screens.audit import AuditScreen
from curiosity_tui.screens.browser import BrowserScreen
from curiosity_tui.screens.decide import DecideScreen
from curiosity_tui.screens.downgrades import DowngradesScreen
from curiosity_tui.screens.workspace import WorkspaceScreen
from curiosity_tui.widgets.node_tree import LedgerTree

ROOT = Path(__file__).resolve().parents[1]
EPISODE = ROOT / "ledgers" / "episode-grabe-pilot01"


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.skipif(not EPISODE.exists(), reason="example workspace not built")
async def test_audit_screen_on_pilot01_example_lists_both_defects() -> None:
    app = make_app(ROOT, ledger=EPISODE)
    async with app.run_test(size=(150, 45)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("A")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AuditScreen)
        kinds = [f.kind for f in screen.report.findings]
        assert "unverified_satisfied" in kinds and "retired_after_unverified" in kinds
        status = str(screen.query_one("#audit-status", Static).render())
        assert "(a) satisfied without verified evidence: 1" in status
        tree = screen.query_one(Tree)
        await pilot.press("enter")  # expand the first finding into its trail
        first = tree.root.children[0]
        assert first.is_expanded
        trail = [c.label.plain for c in first.children]
        seq = screen.report.findings[0].seqs[0]
        assert any(line.startswith(f"▶ seq {seq:>5}") for line in trail), trail
        retired = next(f for f in screen.report.findings if f.kind == "retired_after_unverified")
        node = tree.root.children[screen.report.findings.index(retired)]
        node.expand()
        await pilot.pause()
        assert any("later inputs still carrying it" in c.label.plain for c in node.children)
        await pilot.press("o")  # open the node: back in the same browser
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        assert app.screen.query_one(LedgerTree).current_id == screen.report.findings[0].node


async def test_downgrade_reject_with_grounds_from_the_workspace(tmp_path: Path) -> None:
    ws = build_workspace(tmp_path / "example", markup=False)
    app = make_app(ws, curator_name="carol")
    async with app.run_test(size=(150, 45)) as pilot:
        await settle(pilot)
        await pilot.press("down", "d")  # example-pilot-02
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DowngradesScreen)
        assert [p.id for p in screen.pending] == ["d1"]
        detail = str(screen.query_one("#dg-detail-body", Static).render())
        assert (
            "Check history of r2 (1)" in detail and "No regional literacy data on file." in detail
        )
        await pilot.press("x")
        assert isinstance(app.screen, DecideScreen)
        await pilot.press("ctrl+s")  # no grounds: refused
        assert isinstance(app.screen, DecideScreen)
        assert "required" in str(app.screen.query_one("#decide-error", Static).render())
        await pilot.press(*"Two regional studies exist; the model did not look for them.", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, DowngradesScreen)
        assert not screen.pending and [p.status for p in screen.decided] == ["rejected"]
        table = screen.query_one("#dg-decided", DataTable)
        assert str(table.get_row_at(0)[4]) == "human:carol"
    with Ledger.open(ws / "ledgers" / "example-pilot-02") as led:
        ev = [e for e in led.events() if e.kind == "downgrade_decided"]
        assert ev[0].actor == "human:carol" and ev[0].data["decision"] == "reject"


async def test_opening_a_pack_pushes_the_rating_screen_with_no_route_to_agreement(
    tmp_path: Path,
) -> None:
    shutil.copytree(ROOT / "packs" / "example-pilot-01", tmp_path / "packs" / "example-pilot-01")
    app = make_app(tmp_path)
    async with app.run_test(size=(150, 45)) as pilot:
        await settle(pilot)
        await pilot.press("tab")  # to the packs table
        assert app.screen.focused is app.screen.query_one("#packs", DataTable)
        await pilot.press("enter")
        from curiosity_tui.screens.pack_open import PackOpenScreen

        assert isinstance(app.screen, PackOpenScreen)
        for _ in range(40):
            await pilot.press("backspace")
        await pilot.press(*"rater1", "enter")
        await pilot.pause()
        from curiosity_tui.screens.rating import RatingScreen

        assert isinstance(app.screen, RatingScreen)
        from curiosity_tui.screens.agreement import AgreementScreen

        await pilot.press("escape", "ctrl+g", "g")  # a rater cannot reach other raters' work
        assert isinstance(app.screen, RatingScreen)
        await pilot.press("J")  # nor the coordinator's adjudication
        assert isinstance(app.screen, RatingScreen)
        await pilot.press("ctrl+b")
        assert isinstance(app.screen, WorkspaceScreen)
        # the coordinator's view: g on a pack in the workspace
        await pilot.press("g")
        assert isinstance(app.screen, AgreementScreen)


def test_workspace_summary_running_sort_filter(tmp_path: Path) -> None:
    ws = build_workspace(tmp_path / "w", ledgers=3, markup=False)
    (ws / "ledgers" / "broken").mkdir()
    (ws / "ledgers" / "broken" / "journal.jsonl").write_text("not json\n")
    data = wsmod.scan(ws)
    names = [s.name for s in data.ledgers]
    assert names == ["broken", "example-pilot-01", "example-pilot-02", "run-02"]
    broken = data.ledgers[0]
    assert broken.error and not broken.running
    assert not (ws / "ledgers" / "broken" / "writer.lock").exists()  # never created by a look
    with Ledger.open(ws / "ledgers" / "run-02", write=True):
        held = wsmod.summarize_ledger(ws / "ledgers" / "run-02")
        assert held.running and "pid" in held.holder
    assert not wsmod.summarize_ledger(ws / "ledgers" / "run-02").running
    s = data.ledgers[1]
    assert (s.sessions, s.open, s.closed, s.dormant, s.pending_downgrades) == (3, 4, 1, 1, 1)
    assert wsmod.audit_findings(s.path) == 2
    assert [x.name for x in data.ledgers if x.matches("pilot-02")] == ["example-pilot-02", "run-02"]
    by_sessions = wsmod.sort_ledgers(data.ledgers, "sessions")
    assert by_sessions[-1].name == "broken"
    assert wsmod.ledger_dirs(ws / "ledgers" / "run-02") == [ws / "ledgers" / "run-02"]
    assert [p.name for p in wsmod.ledger_dirs(ws / "ledgers")][:1] == ["broken"]


async def test_metrics_key_opens_the_analysis_screen_over_the_workspace_runs(
    tmp_path: Path,
) -> None:
    ws = build_workspace(tmp_path / "m", markup=False)
    app = make_app(ws)
    async with app.run_test(size=(150, 45)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        from curiosity_tui.screens.analysis import AnalysisScreen

        assert isinstance(app.screen, AnalysisScreen)
        screen = app.screen
        for _ in range(200):
            if screen.data is not None or screen.error is not None:
                break
            await pilot.pause(0.05)
        status = str(screen.query_one("#analysis-status", Static).render())
        assert screen.data is not None, screen.error
        assert "no locked plan" in status.lower() or "nothing was locked" in status.lower(), status
        await pilot.press("escape")
        assert isinstance(app.screen, WorkspaceScreen)
