"""A whole item typed in one burst (no delay between keys) is recorded exactly as typed.

The bug this pins: keys that arrived before the focus had moved were read as category keys
("it develops the input topics" set Q2 to *some* through its ``s``), grounds landed in the
quote field, and nothing was saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.app import RatingApp
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession, read_ratings
from curiosity_tui.packs.schemes import load_scheme
from tests.keyburst import burst, keys_of

SIZE = (160, 50)


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, seed=11)
    return out


def quote_from(pack: Path, index: int) -> str:
    """Four words of section 3 of the item at ``index``: a quote that passes every check."""
    s = RatingSession(pack, "probe")
    return " ".join(s.pack.item(s.order[index]).sections[2].split()[:4])


def whole_item(q1: str, g1: str, q2: str, g2: str, quote: str | None) -> list[str]:
    """Category key, Enter (as raters do), grounds, Enter, … quote, Enter, Enter, Ctrl+S."""
    keys = keys_of(q1, "enter", g1, "enter", q2, "enter", g2, "enter")
    if quote:
        keys += keys_of(quote, "enter")
    return keys + keys_of("enter", "ctrl+s")


async def test_new_item_in_one_burst_is_saved_exactly(pack: Path) -> None:
    quote = quote_from(pack, 0)
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await burst(
            pilot,
            keys_of(
                "b",
                "enter",
                "it develops the input topics",
                "enter",
                "n",
                "enter",
                "all statements are questions",
                "ctrl+s",
            ),
        )
        assert app.rating_screen.progress == (2, 1, 6)
        await burst(pilot, whole_item("f", "starts over", "s", "one figure", quote))
        assert app.rating_screen.progress == (3, 2, 6)
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [(a.category, a.grounds, a.quotes) for a in recs[0].answers.values()] == [
        ("built", "it develops the input topics", []),
        ("none", "all statements are questions", []),
    ]
    assert [(a.category, a.grounds, a.quotes) for a in recs[1].answers.values()] == [
        ("fresh", "starts over", []),
        ("some", "one figure", [quote]),
    ]


async def test_rated_item_revised_in_one_burst_keeps_fields_apart(pack: Path) -> None:
    quote = quote_from(pack, 0)
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await burst(pilot, whole_item("b", "first grounds", "n", "nothing unsupported", None))
        # back to the rated item: its answers are prefilled; a burst revises them field by
        # field — saved grounds are never selected, so ctrl+u clears them first (issue 28)
        await burst(
            pilot,
            [
                "left_square_bracket",
                *keys_of("f", "enter", "ctrl+u", "revised grounds", "enter"),
                *keys_of("m", "enter", "ctrl+u", "many figures", "enter", quote, "enter"),
                *keys_of("enter", "ctrl+s"),
            ],
        )
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [r.revision for r in recs] == [0, 1]
    assert [(a.category, a.grounds, a.quotes) for a in recs[1].answers.values()] == [
        ("fresh", "revised grounds", []),
        ("many", "many figures", [quote]),
    ]


async def test_burst_without_enter_after_the_category_key(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await burst(
            pilot,
            keys_of(
                "b",
                "it develops the input topics",
                "enter",
                "s",
                "some figures stand alone",
                "enter",
                "enter",
                "ctrl+s",
            ),
        )
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [(a.category, a.grounds) for a in recs[0].answers.values()] == [
        ("built", "it develops the input topics"),
        ("some", "some figures stand alone"),
    ]


async def test_corrections_in_a_burst_apply_in_order(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await burst(
            pilot,
            keys_of(
                "b",
                "enter",
                "abx",
                "backspace",
                "c",
                "enter",
                "n",
                "enter",
                "no",
                "backspace",
                "backspace",
                "none",
                "enter",
                "enter",
                "ctrl+s",
            ),
        )
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [a.grounds for a in recs[0].answers.values()] == ["abc", "none"]


async def test_pilot_press_of_a_whole_item(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(
            *whole_item(
                "b", "it develops the input topics", "n", "all statements are questions", None
            )
        )
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [(a.category, a.grounds) for a in recs[0].answers.values()] == [
        ("built", "it develops the input topics"),
        ("none", "all statements are questions"),
    ]


@pytest.mark.parametrize("one_burst", [False, True])
async def test_repicking_a_category_keeps_the_saved_grounds(pack: Path, one_burst: bool) -> None:
    """Issue 28: re-picking a category on a rated item selected the old grounds, so the next
    key replaced them (grounds became "q"). Saved grounds are never selected now."""
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await burst(pilot, whole_item("b", "first grounds", "n", "nothing unsupported", None))
        keys = ["left_square_bracket", "f", *" still", "enter", "enter", "ctrl+s"]
        if one_burst:
            await burst(pilot, keys)
        else:
            for k in keys:
                await pilot.press(k)
            await pilot.pause()
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [r.revision for r in recs] == [0, 1]
    assert [(a.category, a.grounds) for a in recs[1].answers.values()] == [
        ("fresh", "first grounds still"),
        ("none", "nothing unsupported"),
    ]
