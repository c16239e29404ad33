"""Screens that show what changed (issue 13, item 7): the CHG mark lists the change in words
and a requirement retired at this point is shown struck through."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import _record, build_example
from textual.widgets import Static

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger.changes import node_changes, removed_requirements
from curiosity_tui.ledger.events import (
    DecayApplied,
    DependencyChecked,
    ReturnConditionRevised,
    SessionStarted,
)
from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.screens.browser import BrowserScreen
from curiosity_tui.screens.rendering import RenderingScreen
from curiosity_tui.widgets.node_tree import LedgerTree


def revised(path: Path) -> Path:
    """The three-session example plus a session 4 that revises q1's return condition
    (r1 retired, r2 carried, r3 added), checks r3 and lets q2 go dormant."""
    build_example(path, markup=False)
    with Ledger.open(path, write=True) as led:
        call = CallRecord(
            kind="focus",
            model="scripted",
            session=4,
            request_text="FOCUS INPUT: q1 and its return condition",
            response_text='{"focus": "q1", "why": "[bold]raw[/] reply"}',
        )
        rec = _record(led, 4, "q1", "PRESERVE").model_copy(update={"calls": [call]})
        with led.batch(4) as b:
            b.emit(SessionStarted(focus="q1", config="C+cur"))
            b.emit(
                ReturnConditionRevised(
                    required_facts=[
                        {"id": "r2", "text": "Reformation-era literacy by region."},
                        {"id": "r3", "text": "Press locations against early Lutheran towns."},
                    ],
                    closure_test="Causal claim survives the regional comparison.",
                    carried=["r2"],
                    retired=["r1"],
                    added=["r3"],
                ),
                node="q1",
                actor="model",
            )
            b.emit(
                DependencyChecked(
                    requirement="r3",
                    claimed="not_satisfied",
                    evidence_text="No town list yet.",
                    result="not_satisfied",
                    contract="pilot-01",
                ),
                node="q1",
                actor="model",
            )
            b.emit(DecayApplied(nodes=["q2"]))
            b.record_session(rec)
            b.snapshot("session")
    return path


def test_node_changes_in_words() -> None:
    before = {
        "status": "open",
        "text": "Q?",
        "return_condition": {
            "revision": 1,
            "closure_test": "t",
            "required_actions": [],
            "required_facts": [
                {"id": "r1", "text": "a", "status": "satisfied"},
                {"id": "r2", "text": "b", "status": "unchecked"},
            ],
        },
        "checks": [],
    }
    after = {
        **before,
        "status": "dormant",
        "return_condition": {
            "revision": 2,
            "closure_test": "t",
            "required_actions": [],
            "required_facts": [
                {"id": "r2", "text": "b", "status": "not_satisfied"},
                {"id": "r3", "text": "c", "status": "unchecked"},
            ],
        },
        "checks": [{"session": 3, "requirement": "r2", "result": "not_satisfied"}],
    }
    lines = node_changes(before, after)
    assert lines[0] == "status open → dormant"
    for want in (
        "requirement r1 removed",
        "requirement r3 added",
        "requirement r2 unchecked → not_satisfied",
        "return condition revision 1 → 2",
        "check s3 r2 added (not_satisfied)",
    ):
        assert want in lines
    assert [r["id"] for r in removed_requirements(before, after)] == ["r1"]
    assert node_changes(after, after) == [] and node_changes(None, after) == ["new node"]


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return revised(tmp_path_factory.mktemp("changes") / "revised-pilot-01")


def body(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#detail-body", Static).render())


async def test_browser_chg_lists_the_change(ledger: Path) -> None:
    app = make_app(ledger.parent, ledger=ledger)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("left_square_bracket")  # after session 4
        await pilot.pause()
        assert app.screen.state.position.session == 4
        assert app.screen.query_one(LedgerTree).current_id == "q1"
        text = body(app)
        assert "CHG" in text and "changed at this point" in text
        assert "requirement r1 removed" in text and "requirement r3 added" in text
        assert "check s4 r3 added (not_satisfied)" in text
        assert "(retired at this point)" in text and "Print runs of Reformation" in text
        await pilot.press("down")  # q2 went dormant in session 4
        await pilot.pause()
        assert "status open → dormant" in body(app)


def test_snapshot_browser_chg_detail(snap_compare, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(ledger.parent, ledger=ledger)

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.press("left_square_bracket")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(130, 40), run_before=run)


def tree_ids(tree: LedgerTree) -> list[str]:
    return [c.data for c in tree.root.children if isinstance(c.data, str)]


async def test_tree_filters_by_status_and_by_change(ledger: Path) -> None:
    app = make_app(ledger.parent, ledger=ledger)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("left_square_bracket")  # after session 4
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        tree = screen.query_one(LedgerTree)
        await pilot.press("f")  # open
        await pilot.pause()
        assert tree.node_filter == "open"
        opened = [n for n, v in screen.state.nodes.items() if v["status"] == "open"]
        assert sorted(tree_ids(tree)) == sorted(opened) and "q2" not in tree_ids(tree)
        status = str(screen.query_one("#browser-status", Static).render())
        assert f"filter open: {len(opened)} node(s)" in status
        await pilot.press("f")  # dormant
        await pilot.pause()
        assert tree.node_filter == "dormant" and "q2" in tree_ids(tree)
        assert all(screen.state.nodes[n]["status"] == "dormant" for n in tree_ids(tree))
        await pilot.press("F", "F")  # back past open to all
        await pilot.pause()
        assert tree.node_filter == ""
        await pilot.press("F")  # the last filter: new or changed at this point
        await pilot.pause()
        assert tree.node_filter == "NEW/CHG" and tree_ids(tree) == ["q1", "q2"]
        await pilot.press("down")
        await pilot.pause()
        assert tree.current_id == "q2" and "status open → dormant" in body(app)


async def test_v_shows_each_call_input_beside_its_raw_reply(ledger: Path) -> None:
    app = make_app(ledger.parent, ledger=ledger)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("left_square_bracket", "v")  # session 4's input
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RenderingScreen)
        assert not screen.query_one("#reply-pane").has_class("shown")
        for _ in range(len(screen._kinds())):
            if "call 1 of 1" in str(screen.query_one("#rendering-title", Static).render()):
                break
            await pilot.press("i")
            await pilot.pause()
        title = str(screen.query_one("#rendering-title", Static).render())
        assert "call 1 of 1: focus" in title and "the model's raw reply" in title
        left = str(screen.query_one("#rendering-body", Static).render())
        right = str(screen.query_one("#reply-body", Static).render())
        assert left == "FOCUS INPUT: q1 and its return condition"
        assert right == '{"focus": "q1", "why": "[bold]raw[/] reply"}'  # literal, not markup
        assert screen.query_one("#reply-pane").has_class("shown")
        input_pane, reply_pane = screen.query_one("#input-pane"), screen.query_one("#reply-pane")
        assert reply_pane.region.x > input_pane.region.x  # side by side
        assert reply_pane.region.y == input_pane.region.y


async def test_audit_sentence_wraps_and_enter_shows_the_whole_event(ledger: Path) -> None:
    from textual.widgets import Tree

    from curiosity_tui.screens.audit import AuditScreen, EventLeaf

    app = make_app(ledger.parent, ledger=ledger)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("A")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AuditScreen)
        retired = next(f for f in screen.report.findings if f.kind == "retired_after_unverified")
        tree = screen.query_one(Tree)
        node = tree.root.children[screen.report.findings.index(retired)]
        node.expand()
        await pilot.pause()
        kids = list(node.children)
        first_event = next(i for i, c in enumerate(kids) if isinstance(c.data, EventLeaf))
        sentence = [c.label.plain for c in kids[1:first_event]]
        assert len(sentence) > 1 and all(len(line) <= 90 for line in sentence)
        words = " ".join(line.strip() for line in sentence)
        assert words == " ".join(retired.detail.split())  # every word, the seq at the end too
        leaf = next(c for c in node.children if isinstance(c.data, EventLeaf))
        tree.move_cursor(leaf)
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        shown = str(screen.query_one("#audit-detail", Static).render())
        ev = leaf.data.event
        assert f"seq {ev['seq']}" in shown and ev["kind"] in shown and "…" not in shown
        for key in ev["data"]:
            assert f'"{key}"' in shown
        assert isinstance(app.screen, AuditScreen)  # Enter on a journal line stays here


async def test_closing_search_clears_the_match_line(ledger: Path) -> None:
    app = make_app(ledger.parent, ledger=ledger)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        screen = app.screen
        await pilot.press("slash", *"printing", "enter")
        await pilot.pause()
        status = screen.query_one("#browser-status", Static)
        assert "match(es)" in str(status.render())
        await pilot.press("slash", "escape")
        await pilot.pause()
        assert app.screen is screen and "match" not in str(status.render())
