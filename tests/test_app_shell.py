"""The app shell: workspace screen and ledger browser, driven by keys (Pilot)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from app_fixtures import MARKUP, build_workspace
from textual.widgets import DataTable, Static

from curiosity_tui.app import make_app
from curiosity_tui.screens.browser import BrowserScreen
from curiosity_tui.screens.rendering import RenderingScreen
from curiosity_tui.screens.workspace import WorkspaceScreen
from curiosity_tui.widgets.literal import clean
from curiosity_tui.widgets.node_tree import LedgerTree

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("shell") / "example")


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def body_text(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#detail-body", Static).render())


async def test_workspace_lists_ledgers_and_opens_browser(ws: Path) -> None:
    app = make_app(ws)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WorkspaceScreen)
        table = app.screen.query_one("#ledgers", DataTable)
        assert table.row_count == 2
        first = [str(c) for c in table.get_row_at(0)]
        # the key columns first: pending downgrades, audit findings, state (decision 187)
        assert first[0] == "example-pilot-01" and first[9:] == ["C+cur", "pilot-01", "human"]
        assert first[4].strip() == "3"  # sessions
        assert first[5].strip() == "4" and first[6].strip() == "1" and first[7].strip() == "1"
        assert first[1].strip() == "1"
        assert first[2] == "2"  # audit findings, filled in by a worker
        assert first[3] == "idle"
        # filter
        await pilot.press("slash", *"pilot-02", "enter")
        await settle(pilot)
        assert table.row_count == 1
        await pilot.press("escape")
        assert table.row_count == 2
        # open the first ledger
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        tree = app.screen.query_one(LedgerTree)
        assert tree.current_id == "q1"
        await pilot.press("down")
        assert tree.current_id == "q2"
        assert "Which regions had presses before 1517?" in body_text(app)
        await pilot.press("right", "down")  # expand q2, move to its child
        assert tree.current_id == "q5"
        text = body_text(app)
        assert "Augsburg and Nuremberg were major centres." in text
        assert "Journal (2)" in text and "node_created" in text
        await pilot.press("escape")
        assert isinstance(app.screen, WorkspaceScreen)


async def test_browser_detail_slider_search_rendering(ws: Path) -> None:
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        tree = screen.query_one(LedgerTree)
        # q1: return condition marks, checks with evidence text/status, preserved, downgrade
        text = body_text(app)
        assert "[checked s1: satisfied]" in text and "[checked s2: not satisfied]" in text
        assert "evidence text: Pettegree estimates hundreds of thousands of copies." in text
        assert "evidence: none on record" in text
        assert "The press was necessary but not sufficient." in text
        assert "d1 waive r2" in text and "pending" in text
        # slide back to session 1: q5 did not exist yet; q2..q4 are new there
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        assert screen.state is not None and screen.state.position.session == 1
        assert "q5" not in screen.state.nodes
        assert screen.state.changed == {"q1": "changed", "q2": "new", "q3": "new", "q4": "new"}
        assert "changed at this point" in body_text(app)
        assert "[checked s2" not in body_text(app)  # as it stood after session 1
        await pilot.press("right_square_bracket")
        assert screen.state.position.session == 2 and screen.state.changed["q5"] == "new"
        await pilot.press("c")  # next changed node after q1
        assert tree.current_id == "q2"
        await pilot.press("right_curly_bracket")
        assert screen.state.position.session is None
        # search by id and by text
        await pilot.press("slash", "6", "enter")
        assert tree.current_id == "q6"
        await pilot.press("slash", *"imperial", "enter")
        assert tree.current_id == "q5"
        # the rendering session 2 received, verbatim
        await pilot.press("left_square_bracket", "left_square_bracket", "v")
        assert isinstance(app.screen, RenderingScreen)
        saved = app.screen.view.ledger.session_record(2).rendering
        assert str(app.screen.query_one("#rendering-body", Static).render()) == clean(saved)
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert app.screen.session == 4
        assert "not run yet" in str(app.screen.query_one("#rendering-title", Static).render())
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)


async def test_markup_and_control_characters_render_literally(ws: Path) -> None:
    app = make_app(ws, ledger=ws / "ledgers" / "example-pilot-01")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tree = app.screen.query_one(LedgerTree)
        await pilot.press("slash", "4", "enter")
        assert tree.current_id == "q4"
        label = tree.cursor_node.label.plain  # type: ignore[union-attr]
        assert "[bold red]x[/] [link=file:///etc]y[/link]" in label
        assert "\x1b" not in label and "\x07" not in label
        text = body_text(app)
        assert clean(MARKUP) in text
        assert "␛[31m␇␀" in text
        # no span in the detail comes from the node's text (nothing styled red, no links)
        rendered = app.screen.query_one("#detail-body", Static).render()
        assert all("link" not in str(s.style) for s in rendered.spans)  # type: ignore[union-attr]
        await pilot.press("v")  # the rendering holds the same text; still literal
        assert "[bold red]x[/]" in str(app.screen.query_one("#rendering-body", Static).render())


async def test_help_and_palette_list_screen_actions(ws: Path) -> None:
    app = make_app(ws)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for want in ("Open", "Filter", "Sort", "Audit", "Downgrades", "Refresh", "Help"):
            assert want in titles
        await pilot.press("question_mark")
        from curiosity_tui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, WorkspaceScreen)


async def test_keymap_remaps_by_binding_id(ws: Path) -> None:
    app = make_app(
        ws, ledger=ws / "ledgers" / "example-pilot-01", keymap={"browser.prev_session": "p"}
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("p")
        assert app.screen.state.position.session == 3  # type: ignore[attr-defined]


def test_open_command_errors_and_lazy_imports(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-m", "curiosity_tui", "open", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode != 0 and "no such workspace" in r.stderr and "Traceback" not in r.stderr
    code = (
        "import sys, curiosity_tui.app, curiosity_tui.screens.workspace, curiosity_tui.screens.browser;"
        "import curiosity_tui.cli.app_cmds;"
        "print(sorted(m for m in ('numpy','sklearn','openai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "[]", out.stderr
