"""Quotes picked, not typed (issue 28, item 11; decision 571): in the rating screen a rater
moves a cursor through the item's text, marks a span with the keyboard (shift+arrows, or
``space`` and arrows) or the mouse, and Enter adds it as a quote to the question they came from —
exact by construction, still checked. Typing and pasting keep working (tests/test_rating_*)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from curiosity_tui.app import RatingApp
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingRecord, RatingSession, normalise_ws, read_ratings
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.widgets.item_text import ItemText, quote_question
from tests.keyburst import burst, keys_of

SIZE = (100, 30)

#: one item of pilot-02, every quote picked from the text: Q1 (a quote required) gets the
#: first four words of section 1 (space, then ctrl+→ four times); Q2 a span selected with
#: shift+→ from the start of the line below where the first pick ended
TO_Q1_QUOTE = keys_of("a", "enter", "the line of section 1", "enter")  # Q1, grounds: quote line
PICK_Q1 = keys_of("ctrl+t", "space", *["ctrl+right"] * 4, "enter")  # into the text, mark, add
REST = [
    *keys_of("escape", "enter"),  # back to Q1's quote line; empty: on to Q2's row
    *keys_of("s", "enter", "one unsupported figure", "enter"),  # Q2, grounds: quote line
    *keys_of("ctrl+t", "down", "home", *["shift+right"] * 20, "enter"),
    *keys_of("escape", "enter", "ctrl+s"),
]
ITEM_KEYS = TO_Q1_QUOTE + PICK_Q1 + REST


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-02"), out, seed=11)
    return out


def _first_record(pack: Path) -> RatingRecord:
    (rec,) = read_ratings(pack / "ratings" / "ann.jsonl")
    return rec


def _sections(pack: Path, item: str) -> list[str]:
    return RatingSession(pack, "probe").pack.item(item).sections


def _check_picked(pack: Path, rec: RatingRecord) -> None:
    sec = [normalise_ws(s) for s in _sections(pack, rec.item)]
    (q1,) = rec.answers["q1"].quotes
    (q2,) = rec.answers["q2"].quotes
    assert sec[0].startswith(q1) and len(q1.split()) == 4  # four words from the start
    assert any(q2 in s for s in sec) and len(q2) >= 12
    assert rec.answers["q1"].grounds == "the line of section 1"
    assert (rec.answers["q1"].category, rec.answers["q2"].category) == ("advanced", "some")


async def test_an_item_rated_with_every_quote_picked_by_keys(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        await pilot.press(*TO_Q1_QUOTE)
        assert app.focused is scr.query_one("#quote-q1", Input)
        await pilot.press("ctrl+t")  # into the item's text, for Q1
        assert isinstance(app.focused, ItemText) and app.focused.id == "section-1"
        await pilot.press("space", *["ctrl+right"] * 4)
        picked = app.focused.picked
        await pilot.press("enter")
        assert scr.quotes["q1"] == [normalise_ws(picked)]
        assert "accepted (section 1)" in str(scr.query_one("#quote-msg-q1", Static).render())
        assert isinstance(app.focused, ItemText) and app.focused.picked == ""  # pick another
        await pilot.press(*REST)
        assert scr.progress == (2, 1, scr.session.n)
    _check_picked(pack, _first_record(pack))


async def test_the_same_keys_as_one_burst(pack: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(pack, twin)
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*ITEM_KEYS)
    app = RatingApp(twin, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await burst(pilot, ITEM_KEYS)
        assert app.rating_screen.progress[1] == 1
    pressed, burst_rec = _first_record(pack), _first_record(twin)
    _check_picked(twin, burst_rec)
    assert burst_rec.answers == pressed.answers


async def test_a_picked_quote_is_still_checked(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        await pilot.press(*keys_of("a", "enter", "g", "enter", "ctrl+t"))
        await pilot.press("enter")  # nothing selected
        msg = scr.query_one("#quote-msg-q1", Static)
        assert "select a span first" in str(msg.render()) and scr.quotes["q1"] == []
        await pilot.press("space", "ctrl+right", "enter")  # one word: too short
        assert str(msg.render()).startswith("refused: ") and scr.quotes["q1"] == []
        # letters stay in the text: no quit, no category, no other item
        await pilot.press("space", "space", "q", "b", "left_square_bracket")
        assert app.is_running and scr.categories["q2"] is None and scr.progress[0] == 1
        await pilot.press("ctrl+t")  # back to the quote line: typing still works
        assert app.focused is scr.query_one("#quote-q1", Input)


async def test_a_span_dragged_with_the_mouse(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        await pilot.press(*keys_of("a", "enter", "g", "enter"))
        text = scr.query_one("#section-1", ItemText)
        await pilot.mouse_down(text, offset=(0, 0))
        await pilot.hover(text, offset=(20, 0))
        await pilot.mouse_up(text, offset=(20, 0))
        assert app.focused is text and len(text.picked) >= 12
        picked = text.picked
        await pilot.press("enter")  # joins Q1, the question the rater came from
        assert scr.quotes["q1"] == [normalise_ws(picked)]


def test_a_picked_quote_goes_to_a_question_that_takes_quotes() -> None:
    qs = load_scheme("pilot-01").questions  # q1 takes none, q2 does
    assert [q.max_quotes > 0 for q in qs] == [False, True]
    assert quote_question(qs, "q1") == "q2" and quote_question(qs, None) == "q2"
    assert quote_question(qs[:1], "q1") is None


async def test_the_folded_guide_line_shows_its_key_at_100x30(pack: Path) -> None:
    """Its border took the folded guide's one row: the line said nothing at 100x30."""
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        guide = app.screen.query_one("#rating-guide")
        assert guide.region.height == 1 and guide.content_region.height == 1  # was 0
        line = app.screen.query_one("#rating-guide-text", Static)
        assert "Ctrl+G opens it" in str(line.render())[:30]  # the key before the title


def test_snapshot_quote_being_picked_100x30(snap_compare, pack: Path) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press(*TO_Q1_QUOTE, "ctrl+t", "space", *["ctrl+right"] * 4)
        for w in pilot.app.screen.query(ItemText):
            w.cursor_blink = False
        for w in pilot.app.screen.query(Input):
            w.cursor_blink = False
        await pilot.pause()

    assert snap_compare(RatingApp(pack, "snap"), terminal_size=SIZE, run_before=run)
