"""The adjudication screen driven by keys: one by one (Pilot.press) and as one burst, the
refusals it shows, and that nothing on the rating path reaches it."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from curiosity_tui.app import AdjudicationApp, RatingApp, make_app
from curiosity_tui.packs.adjudication import adjudication_path
from curiosity_tui.packs.pack import Pack
from curiosity_tui.screens.adjudication import AdjudicationScreen
from tests.adjudication_fixtures import build_rated_pack
from tests.keyburst import burst, keys_of

SIZE = (160, 50)


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    return build_rated_pack(tmp_path)


def _records(pack: Path) -> list[dict[str, object]]:
    path = adjudication_path(pack)
    return (
        [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        if path.exists()
        else []
    )


def _raw(pack: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((pack / "ratings").glob("*.jsonl"))}


def _text(screen: AdjudicationScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


#: open the first disagreement, pick f, grounds, Enter; then the next (q2 of item 1): n, grounds,
#: Ctrl+S; then the third: down-arrow is not needed (the list moves on by itself)
MAIN_PATH = [
    *keys_of("enter", "f", "section three starts over", "enter"),
    *keys_of("enter", "n", "no figure stands alone", "ctrl+s"),
    *keys_of("enter", "b", "enter", "it develops session one", "enter"),
]


async def _main_path_checks(app: AdjudicationApp, pack: Path) -> None:
    order = Pack.open(pack).order
    recs = _records(pack)
    assert [(r["item"], r["question"], r["category"], r["grounds"]) for r in recs] == [
        (order[0], "q1", "fresh", "section three starts over"),
        (order[0], "q2", "none", "no figure stands alone"),
        (order[1], "q1", "built", "it develops session one"),
    ]
    assert all(r["adjudicator"] == "human:cy" for r in recs)
    screen = app.adjudication_screen
    assert "every disagreement is adjudicated" in _text(screen, "#adj-message")
    assert "3 disagreement(s) · 3 adjudicated" in _text(screen, "#adj-status")


async def test_main_path_key_by_key(pack: Path) -> None:
    before = _raw(pack)
    app = AdjudicationApp(pack, "human:cy")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.adjudication_screen
        # the first disagreement is shown side by side, the item literally
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(screen.raters_table)
        raters = console.export_text()
        assert "ann" in raters and "bob" in raters and "fresh" in raters and "built" in raters
        assert "[bold red]loud[/]" in raters and "␛" in raters  # markup and ESC shown, not run
        await pilot.press(*MAIN_PATH)
        await pilot.pause()
        await _main_path_checks(app, pack)
    assert _raw(pack) == before


async def test_main_path_in_one_burst(pack: Path) -> None:
    before = _raw(pack)
    app = AdjudicationApp(pack, "human:cy")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await burst(pilot, MAIN_PATH)
        await _main_path_checks(app, pack)
    assert _raw(pack) == before


async def test_letters_typed_in_the_grounds_are_not_categories_and_revision(pack: Path) -> None:
    app = AdjudicationApp(pack, "human:cy")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # "b" and "f" inside the grounds stay text; "n" (a q2 key) does nothing on the q1 row
        await burst(pilot, keys_of("enter", "n", "f", "both fresh and built", "enter"))
        recs = _records(pack)
        assert [(r["category"], r["grounds"]) for r in recs] == [("fresh", "both fresh and built")]
        # back up to the first (adjudicated) one: saving again records a revision naming it
        await burst(pilot, keys_of("up", "enter", "b", "on reflection it builds", "ctrl+s"))
    recs = _records(pack)
    assert [(r["seq"], r["category"], r["replaces"]) for r in recs] == [
        (1, "fresh", None),
        (2, "built", 1),
    ]


async def test_refusals_are_shown_and_nothing_is_written(pack: Path) -> None:
    app = AdjudicationApp(pack, "human:cy")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.adjudication_screen
        await pilot.press("enter", "ctrl+s")  # no category
        assert "pick a category for q1" in _text(screen, "#adj-message")
        await pilot.press("f", "ctrl+s")  # no grounds
        assert "grounds are required" in _text(screen, "#adj-message")
        await pilot.press("escape", "escape")  # form → list → out
        await pilot.pause()
    assert not _records(pack) and not app.is_running


async def test_closed_once_the_key_is_opened(pack: Path) -> None:
    from curiosity_tui.packs.unblind import unblind

    unblind(pack, by="human:cy")
    app = AdjudicationApp(pack, "human:cy")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.adjudication_screen
        assert "adjudication is closed" in _text(screen, "#adj-status")
        await pilot.press(*keys_of("enter", "f", "grounds", "enter"))
        assert "the key was opened" in _text(screen, "#adj-message")
    assert not _records(pack)


async def test_rating_app_has_no_route_to_adjudication(pack: Path) -> None:
    """Every screen-level key of the rating app, pressed on the rating screen: none opens the
    adjudication (or agreement) screen, and the rating modules never import it."""
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for key in ("escape", "J", "g", "ctrl+b", "ctrl+l", "escape", "ctrl+g", "ctrl+g"):
            await pilot.press(key)
            await pilot.pause()
            assert not any(isinstance(s, AdjudicationScreen) for s in app.screen_stack)
        assert not hasattr(app, "open_adjudication_screen")
    root = Path(__file__).resolve().parents[1] / "curiosity_tui"
    for module in ("screens/rating.py", "screens/pack_open.py"):
        assert "adjudication" not in (root / module).read_text(encoding="utf-8")


async def test_workspace_key_opens_adjudication_for_the_selected_pack(
    pack: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(pack, ws / "packs" / "pack")
    app = make_app(ws, curator_name="cy")
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(10):
            await pilot.pause()
        await pilot.press("tab")  # to the packs table
        await pilot.press("J")
        await pilot.pause()
        assert isinstance(app.screen, AdjudicationScreen)
        assert app.screen.coordinator == "human:cy"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, AdjudicationScreen)


def test_cli_adjudicate_opens_the_app_as_the_coordinator(
    pack: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curiosity_tui.cli import main

    seen: list[tuple[Path, str]] = []
    monkeypatch.setattr(
        AdjudicationApp, "run", lambda self: seen.append((self.packdir, self.coordinator))
    )
    assert main(["adjudicate", str(pack), "--coordinator", "cy"]) == 0
    assert seen == [(pack, "human:cy")]


async def test_incomplete_ratings_list_nothing_and_save_nothing(tmp_path: Path) -> None:
    pack = build_rated_pack(tmp_path, upto=3)
    app = AdjudicationApp(pack, "human:cy")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.adjudication_screen
        assert "ratings incomplete" in _text(screen, "#adj-status")
        assert screen.query_one("#adj-list").option_count == 0  # type: ignore[attr-defined]
        await pilot.press("enter", "f", "ctrl+s", "question_mark")
        await pilot.pause()
        assert "nothing to adjudicate" in _text(screen, "#adj-message")
        from curiosity_tui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)  # help works here as everywhere
    assert not _records(pack)
