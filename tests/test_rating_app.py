"""The rating screen driven by keys (Textual Pilot), kill and restart, and the agreement screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import DataTable, Input, Static

from curiosity_tui.app import RatingApp
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.pack import default_key_path
from curiosity_tui.packs.rating import RatingSession, read_ratings
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.screens.agreement import AgreementScreen

SIZE = (160, 50)


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, seed=11)
    return out


def _text(app: RatingApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def _rate_by_keys(pilot, app: RatingApp, q1: str, q2: str, quote: str | None) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(q1)
    assert app.focused is app.screen.query_one("#grounds-q1", Input)
    await pilot.press(*"reads the list", "enter")
    await pilot.press(q2)
    await pilot.press(*"figures", "enter")
    assert app.focused is app.screen.query_one("#quote-q2", Input)
    if quote:
        app.screen.query_one("#quote-q2", Input).value = quote
        await pilot.press("enter")
    await pilot.press("enter")  # empty quote line: leave it
    await pilot.press("ctrl+s")
    await pilot.pause()


async def test_pilot_rate_three_refuse_quote_kill_restart_resume(pack: Path) -> None:
    key = default_key_path(pack)
    key.rename(pack.parent / "stashed-key.json")  # rating must not need the key
    order = RatingSession(pack, "ann").order

    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        assert scr.progress == (1, 0, 6)
        assert "item 1 of 6" in _text(app, "#rating-status")
        await _rate_by_keys(pilot, app, "b", "s", "Nuremberg produced roughly 40-50%")
        assert scr.progress == (2, 1, 6)
        await _rate_by_keys(pilot, app, "f", "n", None)
        # third item: a wrong quote is refused with its reason, a right one accepted
        await pilot.press("b", *"ok", "enter", "m", *"lots", "enter")
        app.screen.query_one("#quote-q2", Input).value = "Nuremberg produced exactly 12%"
        await pilot.press("enter")
        msg = _text(app, "#quote-msg-q2")
        assert "refused" in msg and "not verbatim" in msg and "section 3" in msg
        assert scr.quotes["q2"] == []
        app.screen.query_one("#quote-q2", Input).value = "Reprints travelled along trade routes"
        await pilot.press("enter")
        assert scr.quotes["q2"] == ["Reprints travelled along trade routes"]
        await pilot.press("enter", "ctrl+s")
        await pilot.pause()
        assert scr.progress == (4, 3, 6)
        # start typing the fourth item, then the app dies before saving it
        await pilot.press("b", *"half typed")
    # a new App instance, as after a restart
    app2 = RatingApp(pack, "ann")
    async with app2.run_test(size=SIZE) as pilot:
        scr2 = app2.rating_screen
        assert scr2.progress == (4, 3, 6)
        assert scr2.item_id == order[3]
        # the unsaved pick came back from the drafts file (decision 212); nothing was saved
        assert scr2.categories == {"q1": "built", "q2": None}
        assert "draft" in _text(app2, "#rating-message")
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [r.item for r in recs] == order[:3]
    assert recs[0].answers["q2"].quotes == ["Nuremberg produced roughly 40-50%"]
    assert recs[1].answers["q1"].category == "fresh"
    assert recs[2].answers["q2"].quotes == ["Reprints travelled along trade routes"]
    assert not key.exists()


async def test_errors_appear_on_leaving_or_saving_and_clear_when_fixed(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        assert _text(app, "#error-q1") == "" and _text(app, "#error-q2") == ""
        await pilot.press("b")
        assert _text(app, "#error-q1") == ""  # nothing typed yet, nothing left yet: no error
        await pilot.press("enter")  # right after the key: confirms the pick, no error yet
        assert _text(app, "#error-q1") == ""
        await pilot.press("enter")  # leaving empty grounds is refused, with the reason
        assert "grounds are required" in _text(app, "#error-q1")
        assert app.focused is app.screen.query_one("#grounds-q1", Input)
        await pilot.press(*"fine")
        assert _text(app, "#error-q1") == ""  # cleared as soon as it is fixed
        await pilot.press("enter", "ctrl+s")
        assert "not saved" in _text(app, "#rating-message")
        assert "pick a category" in _text(app, "#error-q2")
        assert app.rating_screen.progress == (1, 0, 6)
        await pilot.press("n")
        assert "grounds are required" in _text(app, "#error-q2")
        await pilot.press(*"fine too")
        assert _text(app, "#error-q2") == ""
        await pilot.press("ctrl+s")
        assert app.rating_screen.progress == (2, 1, 6)
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [(a.category, a.grounds) for a in recs[0].answers.values()] == [
        ("built", "fine"),
        ("none", "fine too"),
    ]


async def test_go_back_and_revise_appends_revision(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        await _rate_by_keys(pilot, app, "b", "n", None)
        assert app.rating_screen.progress == (2, 1, 6)
        await pilot.press("left_square_bracket")
        scr = app.rating_screen
        assert scr.progress[0] == 1
        assert scr.categories == {"q1": "built", "q2": "none"}  # prefilled from the saved rating
        assert app.screen.query_one("#grounds-q1", Input).value == "reads the list"
        await pilot.press("f", "escape", "ctrl+s")
        await pilot.pause()
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [(r.revision, r.answers["q1"].category) for r in recs] == [(0, "built"), (1, "fresh")]


async def test_moving_away_keeps_a_draft_and_brings_it_back(pack: Path) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        await pilot.press("b", *"half done", "escape", "right_square_bracket")
        assert scr.progress[0] == 2
        assert "draft of item 1 kept" in _text(app, "#rating-message")
        await pilot.press("right_square_bracket")  # past item 2 (nothing typed: no draft)
        assert scr.progress[0] == 3
        assert [state for _, state in scr.item_marks()[:3]] == [
            "unrated · draft",
            "unrated",
            "unrated",
        ]
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert scr.progress[0] == 1
        assert scr.categories == {"q1": "built", "q2": None}
        assert app.screen.query_one("#grounds-q1", Input).value == "half done"
        assert "draft" in _text(app, "#rating-message")
        await pilot.press("n", *"none seen", "enter", "enter", "ctrl+s")
        assert scr.progress == (2, 1, 6)
        assert "draft" not in scr.item_marks()[0][1]
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert recs[0].answers["q1"].grounds == "half done"


async def test_agreement_screen_shows_tables_and_undefined(pack: Path) -> None:
    for rater in ("ann", "bob"):
        s = RatingSession(pack, rater)
        for k, item in enumerate(s.order):
            s.save(
                item,
                {
                    "q1": {"category": "built", "grounds": "g"},  # saturated: κ undefined
                    "q2": {"category": ["none", "some", "many"][k % 3], "grounds": "g"},
                },
            )

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(AgreementScreen(pack, n_boot=200))

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        scr = app.screen
        assert isinstance(scr, AgreementScreen) and scr.report is not None
        q1 = scr.query_one("#summary-human-q1", DataTable)
        row = q1.get_row_at(1)
        assert row[:3] == ["human", "Fleiss' κ", "undefined"] and "one category" in row[4]
        q2 = scr.query_one("#summary-human-q2", DataTable)
        assert q2.get_row_at(1)[2] == "1.000"
        counts = scr.query_one("#counts-human-q2", DataTable)
        assert counts.get_row_at(0) == ["human", "ann", "2", "2", "2"]


async def test_agreement_screen_shows_each_group_in_every_row(pack: Path) -> None:
    from curiosity_tui.packs.rating import ModelRating

    by = ModelRating(model="m", endpoint="http://127.0.0.1:1/v1", calls=1)
    for rater in ("ann", "bob", "model:m1", "model:m2"):
        s = RatingSession(pack, rater)
        for k, item in enumerate(s.order):
            answers = {
                "q1": {"category": "built", "grounds": "g"},
                "q2": {"category": ["none", "some", "many"][k % 3], "grounds": "g"},
            }
            s.save(item, answers, by_model=by if rater.startswith("model:") else None)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(AgreementScreen(pack, n_boot=100))

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        scr = app.screen
        assert isinstance(scr, AgreementScreen) and scr.report is not None
        for group in ("human", "model", "human-model"):
            table = scr.query_one(f"#summary-{group}-q2", DataTable)
            rows = [table.get_row_at(i) for i in range(table.row_count)]
            assert rows and all(r[0] == group for r in rows)
        cross = scr.query_one("#summary-human-model-q2", DataTable)
        assert cross.get_row_at(1)[2] == "undefined"  # Fleiss across groups: never pooled
        kappas = [cross.get_row_at(i)[1] for i in range(cross.row_count)]
        assert "Cohen's κ ann × model:m1" in kappas and "Cohen's κ ann × bob" not in kappas
        assert not scr.query("#counts-human-model-q2")
        model_counts = scr.query_one("#counts-model-q2", DataTable)
        assert model_counts.get_row_at(0)[:2] == ["model", "model:m1"]
