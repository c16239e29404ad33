"""The rater's guide on screen, the help title, quote minimum length, the item list (jump
with Enter) and flags for the coordinator."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Static

from curiosity_tui.app import RatingApp
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.flags import FlagStore, flags_path
from curiosity_tui.packs.rating import RatingError, RatingSession
from curiosity_tui.packs.schemes import Scheme, load_scheme
from curiosity_tui.screens.help import HelpScreen
from curiosity_tui.screens.rating import RatingScreen
from tests.keyburst import burst, keys_of

SIZE = (160, 50)


@pytest.fixture
def pack2(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-02"), out, seed=3)
    return out


def _text(app: App[None], selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def test_help_title_is_in_words() -> None:
    assert RatingScreen.HELP_TITLE == "Rating — keys"


async def test_guide_shows_instructions_category_help_and_quote_help(pack2: Path) -> None:
    scheme = load_scheme("pilot-02")
    app = RatingApp(pack2, "ann")
    async with app.run_test(size=SIZE) as pilot:
        guide = " ".join(_text(app, "#rating-guide-text").split())
        assert " ".join(scheme.instructions.split()) in guide
        row = str(app.screen.query_one("#cats-q1").render())
        for c in scheme.questions[0].categories:
            assert f"[{c.key}] {c.label}" in " ".join(row.split())
            assert c.help.split()[0] in row
        quote_help = " ".join(str(w.render()) for w in app.screen.query(".q-quote-help"))
        assert scheme.questions[0].quote_help.split(" (")[0] in " ".join(quote_help.split())
        assert "at least 12 characters and 2 words" in " ".join(quote_help.split())
        await pilot.press("ctrl+g")
        assert not app.screen.query_one("#rating-guide").display
        await pilot.press("ctrl+g")
        assert app.screen.query_one("#rating-guide").display
        help_screen = HelpScreen(app.rating_screen)
        app.push_screen(help_screen)
        await pilot.pause()
        assert str(help_screen._table().title) == "Rating — keys"


async def test_one_letter_quote_is_refused_on_screen_and_in_the_domain(pack2: Path) -> None:
    app = RatingApp(pack2, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await burst(pilot, keys_of("r", "enter", "restated", "enter", "n", "enter"))
        assert "too short" in _text(app, "#quote-msg-q1")
        assert app.rating_screen.quotes["q1"] == []
    s = RatingSession(pack2, "ann")
    item = s.pack.item(s.order[0])
    one_word = item.sections[2].split()[1]  # verbatim, but one word
    with pytest.raises(RatingError, match="too short"):
        s.save(
            item.id,
            {
                "q1": {"category": "repeated", "grounds": "g", "quotes": [one_word]},
                "q2": {"category": "none", "grounds": "g"},
            },
        )


def test_quote_minimum_is_configurable_in_the_scheme() -> None:
    data = load_scheme("pilot-02").model_dump()
    data["questions"][0]["quote_min_chars"] = 3
    data["questions"][0]["quote_min_words"] = 1
    q = Scheme.model_validate(data).questions[0]
    assert (q.quote_min_chars, q.quote_min_words) == (3, 1)
    assert (load_scheme("pilot-01").questions[1].quote_min_chars, 2) == (12, 2)


async def test_item_list_marks_and_jump_with_enter(pack2: Path) -> None:
    app = RatingApp(pack2, "ann")
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        await pilot.press("ctrl+l")
        assert app.screen.query_one("#rating-items").display
        await pilot.press("down", "down", "enter")
        assert scr.progress[0] == 3
        assert not app.screen.query_one("#rating-items").display


async def test_flag_with_a_note_is_stored_apart_and_only_for_this_rater(pack2: Path) -> None:
    app = RatingApp(pack2, "ann")
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        item = scr.item_id
        await burst(pilot, keys_of("ctrl+f", "section 2 looks cut off", "enter"))
        assert scr.item_marks()[0] == (item, "unrated · flagged")
        assert "flagged" in _text(app, "#rating-status")
    assert FlagStore(pack2, "ann", "x").current() == {item: "section 2 looks cut off"}
    assert flags_path(pack2, "ann").parent.name == "flags"
    assert not (pack2 / "ratings" / "ann.jsonl").exists()  # no rating was written
    assert FlagStore(pack2, "bob", "x").current() == {}
    bob = RatingScreen(pack2, "bob")
    assert all("flagged" not in state for _, state in bob.item_marks())


async def test_at_100x30_the_guide_folds_and_q1_choices_show(pack2: Path) -> None:
    """Issue 28, item 11: at 100x30 the guide and key hints filled the right pane and Q1's
    choices started at row 26; the guide now opens folded to its title line until ctrl+g."""
    app = RatingApp(pack2, "ann")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        guide = app.screen.query_one("#rating-guide")
        row = app.screen.query_one("#cats-q1")
        assert guide.region.height == 1 and "Ctrl+G opens it" in _text(app, "#rating-guide-text")
        assert row.region.bottom <= 29  # every choice of Q1 on screen, above the footer
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert guide.region.height > 1 and "Ctrl+G hides" in _text(app, "#rating-guide-text")
    app = RatingApp(pack2, "bob")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert app.screen.query_one("#rating-guide").region.height > 1  # room: open
