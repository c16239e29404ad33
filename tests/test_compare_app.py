"""The comparison screen (issue 26, item 6): driven with Pilot over two of the repository's
example ledgers — step sessions, switch panes, hide the metrics, open a node — the same keys
as one burst, an SVG snapshot, and the workspace's way in (mark with space, compare with =)
between a human-curated and a model-curated run whose question text holds markup."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_fixtures import build_workspace
from textual.widgets import DataTable, Static

from curiosity_tui.app import make_app
from curiosity_tui.app.standalone import CompareApp
from curiosity_tui.screens.browser import BrowserScreen
from curiosity_tui.screens.compare import CompareScreen
from curiosity_tui.widgets.node_tree import LedgerTree
from tests.keyburst import burst

LEDGERS = Path(__file__).resolve().parents[1] / "ledgers"
A = LEDGERS / "example-C+cur-pilot02"
B = LEDGERS / "example-C-cur-pilot02"
SIZE = (160, 48)


async def _ready(pilot) -> CompareScreen:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    return screen


def _text(screen: CompareScreen, wid: str) -> str:
    return str(screen.query_one(wid, Static).render())


def _labels(tree: LedgerTree) -> list[str]:
    return [str(tree.get_node_at_line(i).label) for i in range(tree.last_line + 1)]  # type: ignore[union-attr]


def _state(screen: CompareScreen) -> tuple[int, str | None, bool, str, str]:
    focused = screen.focused.id if screen.focused is not None else None
    metrics = screen.query_one("#compare-metrics", DataTable).display
    return screen.index, focused, metrics, _text(screen, "#summary-a"), _text(screen, "#summary-b")


KEYS = [
    "right_square_bracket",
    "right_square_bracket",
    "tab",
    "tab",
    "m",
    "tab",
    "left_square_bracket",
    "right_square_bracket",
    "right_square_bracket",
]


async def test_step_sessions_switch_panes_and_toggle_metrics() -> None:
    app = CompareApp(A, B)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ready(pilot)
        assert screen.index == 0 and "s1 PRESERVE" in _text(screen, "#summary-a")
        assert screen.query_one("#compare-metrics", DataTable).row_count >= 50
        tree_a = screen.query_one("#tree-a", LedgerTree)
        assert tree_a.has_focus and any(lab.startswith("NEW") for lab in _labels(tree_a))
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert screen.index == 2
        summary_a = _text(screen, "#summary-a")
        assert "s3 ANSWER" in summary_a and "blocked q3 (unmet r1 r2)" in summary_a
        assert "focus q1" in _text(screen, "#summary-b")
        assert "▸s3◂" in _text(screen, "#compare-bar")
        assert tree_a.state is not None and tree_a.state.position.session == 3
        # tab: tree A -> tree B -> metrics -> tree A
        await pilot.press("tab")
        assert screen.focused is screen.query_one("#tree-b", LedgerTree)
        await pilot.press("tab")
        assert screen.focused is screen.query_one("#compare-metrics", DataTable)
        await pilot.press("m")  # metrics hidden: focus back on a tree, tab skips the table
        assert not screen.query_one("#compare-metrics", DataTable).display
        assert screen.focused is tree_a
        await pilot.press("tab", "tab")
        assert screen.focused is tree_a
        await pilot.press("right_curly_bracket")
        assert screen.index == 4
        await pilot.press("right_square_bracket")  # past the end: stays
        assert screen.index == 4
        await pilot.press("left_curly_bracket")
        assert screen.index == 0


async def test_the_same_keys_in_one_burst_end_where_pressed_keys_do() -> None:
    ends = []
    for send in ("press", "burst"):
        app = CompareApp(A, B)
        async with app.run_test(size=SIZE) as pilot:
            screen = await _ready(pilot)
            if send == "press":
                await pilot.press(*KEYS)
            else:
                await burst(pilot, KEYS)
            await pilot.pause()
            ends.append(_state(screen))
    assert ends[0] == ends[1]
    assert ends[0][0] == 3 and ends[0][2] is False and ends[0][1] == "tree-b"


async def test_o_opens_the_node_in_the_browser_and_esc_comes_back() -> None:
    app = CompareApp(A, B)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ready(pilot)
        await pilot.press("tab", "o")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen) and app.screen.path == B
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


@pytest.fixture
def mixed_workspace(tmp_path: Path) -> Path:
    """The app fixture's human-curated ledger (markup in q4) beside a model-curated example."""
    root = build_workspace(tmp_path / "ws", ledgers=1)
    shutil.copytree(A, root / "ledgers" / A.name, ignore=shutil.ignore_patterns("writer.lock"))
    return root


async def test_workspace_marks_one_and_compares_with_the_cursor(mixed_workspace: Path) -> None:
    app = make_app(mixed_workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("equals_sign")  # nothing marked: a warning, no screen
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)
        await pilot.press("space")
        table = app.screen.query_one("#ledgers", DataTable)
        assert str(table.get_row_at(0)[0]).startswith("◆ ")
        await pilot.press("down", "equals_sign")
        screen = await _ready(pilot)
        comp = screen.comparison
        assert comp is not None and (comp.a.curator, comp.b.curator) == ("model", "human")
        assert "curator" in comp.differ
        tree_b = screen.query_one("#tree-b", LedgerTree)
        labels = _labels(tree_b)
        # the markup question is shown as its literal text (controls as pictures), never styled
        assert any("[bold red]x[/] [link=file:///etc]y[/link]␛[31m" in lab for lab in labels)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)


def test_snapshot_compare(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """Session 3 of both runs with the metrics hidden (``m``): the table's scrollbar depends
    on how many metrics the registry holds, which every new metric would change; its
    content is tested above."""

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await _ready(pilot)
        await pilot.press("right_square_bracket", "right_square_bracket", "m")
        await pilot.pause()

    assert snap_compare(CompareApp(A, B), terminal_size=(130, 40), run_before=run)


async def test_a_run_that_ended_earlier_keeps_its_last_tree() -> None:
    short = LEDGERS / "real-gemma3-270m-C-cur-pilot02"  # three sessions
    app = CompareApp(short, A)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _ready(pilot)
        await pilot.press("right_curly_bracket")
        assert screen.index == 4
        summary = _text(screen, "#summary-a")
        assert "s5: no session (the run ended before it)" in summary
        assert "tree: as it stood after s3" in summary
        tree = screen.query_one("#tree-a", LedgerTree)
        assert tree.state is not None and tree.state.position.session == 3
        assert "s5 PRESERVE" in _text(screen, "#summary-b")


async def test_scripted_runs_carry_the_practice_label() -> None:
    app = CompareApp(A, B)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ready(pilot)
        practice = screen.query_one("#compare-practice", Static)
        assert practice.display and _text(screen, "#compare-practice").startswith(
            "SCRIPTED PRACTICE"
        )
    app = CompareApp(LEDGERS / "real-gemma3-270m-C-cur-pilot02", A)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _ready(pilot)
        assert _text(screen, "#compare-practice").startswith("MIXED")


async def test_two_marked_ledgers_are_compared_wherever_the_cursor_is(
    mixed_workspace: Path,
) -> None:
    shutil.copytree(
        B, mixed_workspace / "ledgers" / B.name, ignore=shutil.ignore_patterns("writer.lock")
    )
    app = make_app(mixed_workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        ws = app.screen
        # rows by name: example-C+cur…, example-C-cur…, example-pilot-01
        await pilot.press("space", "space")  # marked, then unmarked
        assert ws.marked == []  # type: ignore[attr-defined]
        await pilot.press("space", "down", "space", "down", "space")  # a third drops the oldest
        names = [p.name for p in ws.marked]  # type: ignore[attr-defined]
        assert names == [B.name, "example-pilot-01"]
        await pilot.press("up", "up", "equals_sign")
        screen = await _ready(pilot)
        assert [Path(p).name for p in screen.paths] == names
