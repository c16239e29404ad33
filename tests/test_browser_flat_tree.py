"""A flat ledger (every node a child of the seed) is browsed chunk by chunk: the last child is
reached by keys sent in one burst and by search, and its detail is shown (decision 041)."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import build_big
from textual.widgets import Static

from curiosity_tui.app import make_app
from curiosity_tui.screens.browser import BrowserScreen
from curiosity_tui.widgets.node_tree import LedgerTree, More

CHILDREN = 450  # three chunks of LedgerTree.CHUNK (200, 200, 50)


@pytest.fixture(scope="module")
def flat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flat") / "ledgers" / "flat"
    return build_big(path, n=CHILDREN + 1, fanout=CHILDREN + 1)


async def open_browser(pilot, path: Path) -> LedgerTree:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, BrowserScreen)
    assert screen.view is not None and screen.view.events_ready()
    return screen.query_one(LedgerTree)


def detail(app) -> str:  # type: ignore[no-untyped-def]
    return str(app.screen.query_one("#detail-body", Static).render())


async def test_last_child_by_a_burst_of_keys(flat: Path) -> None:
    app = make_app(flat.parent.parent, ledger=flat)
    async with app.run_test(size=(120, 40)) as pilot:
        tree = await open_browser(pilot, flat)
        assert tree.current_id == "q1"
        kids = app.screen.state.children["q1"]
        assert len(kids) == CHILDREN and kids[-1] == f"q{CHILDREN + 1}"
        assert len(tree.root.children[0].children) == LedgerTree.CHUNK + 1  # a chunk + "more"
        # down to the "… more" leaf, Enter loads the next chunk in its place: one burst
        burst = ["down"] * (LedgerTree.CHUNK + 1) + ["enter"]
        burst += ["down"] * LedgerTree.CHUNK + ["enter"]
        burst += ["down"] * (CHILDREN - 2 * LedgerTree.CHUNK - 1)
        await pilot.press(*burst)
        await pilot.pause()
        assert tree.current_id == kids[-1]
        assert not any(isinstance(n.data, More) for n in tree.root.children[0].children)
        assert f"Question {CHILDREN + 1} under q1" in detail(app)
        await pilot.press("down")  # the last line: the cursor stays
        assert tree.current_id == kids[-1]
        await pilot.press("up")
        assert tree.current_id == kids[-2]
        assert f"Question {CHILDREN} under q1" in detail(app)


async def test_last_child_by_search_and_filter(flat: Path) -> None:
    app = make_app(flat.parent.parent, ledger=flat)
    async with app.run_test(size=(120, 40)) as pilot:
        tree = await open_browser(pilot, flat)
        last = f"q{CHILDREN + 1}"
        await pilot.press("slash", *str(CHILDREN + 1), "enter")
        await pilot.pause()
        assert tree.current_id == last  # its chunk was loaded on the way
        assert f"Question {CHILDREN + 1} under q1" in detail(app)
        await pilot.press("slash", *f"Question {CHILDREN} under", "enter")
        await pilot.pause()
        assert tree.current_id == f"q{CHILDREN}"
        await pilot.press("f")  # the "open" filter: a flat list of every open node
        await pilot.pause()
        assert tree.current_id == f"q{CHILDREN}"
        assert len(tree.root.children) == CHILDREN + 1
