"""Raters who do not all see one order, and how long they took (issue 24, item 5; decision
427): per-rater presentation orders seeded by the pack and the rater's name, recorded in the
rater's copy and in each rating; time on item recorded by the rating app (a Pilot test), time
away excluded when the terminal reports losing focus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input

from curiosity_tui.app import RatingApp
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.item_timer import ItemTimer, time_left
from curiosity_tui.packs.pack import Pack, order_seed
from curiosity_tui.packs.rating import RatingSession, read_ratings
from curiosity_tui.packs.schemes import load_scheme


def _pack(tmp_path: Path, order: str, name: str = "pack") -> Path:
    out = tmp_path / name
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, seed=11, order=order)
    return out


def test_two_raters_get_different_recorded_orders_and_the_same_seed_the_same_order(
    tmp_path: Path,
) -> None:
    pack = _pack(tmp_path, "per-rater")
    manifest = Pack.open(pack).manifest
    assert manifest.order == "per-rater"
    ann, bob = RatingSession(pack, "ann"), RatingSession(pack, "bob")
    assert sorted(ann.order) == sorted(bob.order) == sorted(Pack.open(pack).order)
    assert ann.order != bob.order
    assert ann.order_seed == order_seed(manifest.pack_id, "ann") != bob.order_seed
    assert RatingSession(pack, "ann").order == ann.order  # the same seed, the same order
    rec = ann.save(
        ann.order[0],
        {"q1": {"category": "built", "grounds": "g"}, "q2": {"category": "some", "grounds": "g"}},
    )
    assert (rec.position, rec.order_seed) == (1, ann.order_seed)
    # the rater's copy records the order and its seed
    copy = tmp_path / "copy"
    assert main(["pack", "export", str(pack), "--rater", "bob", "--out", str(copy)]) == 0
    marker = json.loads((copy / "export.json").read_text())
    assert marker["order_seed"] == bob.order_seed and marker["order"] == bob.order
    assert RatingSession(copy, "bob").order == bob.order
    fixed = _pack(tmp_path, "fixed", "fixed")
    a, b = RatingSession(fixed, "ann"), RatingSession(fixed, "bob")
    assert a.order == b.order == Pack.open(fixed).order and a.order_seed is None


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


SIZE = (160, 50)


async def test_time_on_item_is_recorded_through_the_app(tmp_path: Path) -> None:
    pack = _pack(tmp_path, "per-rater")
    clock = FakeClock()
    app = RatingApp(pack, "ann")
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        scr.timer = ItemTimer(wall=lambda: "2026-12-02T06:00:00.000Z", mono=clock)
        scr.timer.show(scr.item_id)
        first = scr.item_id
        assert first == scr.session.order[0]
        clock.now += 10.0
        app.app_focus = False  # the terminal reports the app lost focus: time away
        await pilot.pause()
        clock.now += 100.0
        app.app_focus = True
        await pilot.pause()
        clock.now += 5.5
        await pilot.press("f", *"by keys", "enter", "m", *"many", "enter")
        assert app.focused is app.screen.query_one("#quote-q2", Input)
        await pilot.press("enter", "ctrl+s")
        await pilot.pause()
        assert scr.item_id != first  # moved on to the next item
        assert "min left" in str(scr.query_one("#rating-status").render())
    (rec,) = read_ratings(pack / "ratings" / "ann.jsonl")
    assert rec.item == first and rec.position == 1
    assert rec.shown_at == "2026-12-02T06:00:00.000Z"
    assert rec.seconds_on_item == pytest.approx(15.5)  # 10 + 5.5: the 100 s away left out


def test_item_timer_sums_visits_and_estimates_time_left() -> None:
    clock = FakeClock()
    t = ItemTimer(wall=lambda: "w", mono=clock)
    t.show("a")
    clock.now += 30
    t.show("b")
    clock.now += 90
    t.show("a")
    clock.now += 30
    assert t.timing("a") == ("w", 60.0) and t.timing("b") == ("w", 90.0)
    assert t.timing("zz") is None
    assert time_left(t, 4) == " · about 5 min left"  # median 75 s x 4
    assert time_left(t, 0) == "" and time_left(ItemTimer(), 3) == ""


def test_agreement_by_position_tercile_median_time_and_too_fast(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = _pack(tmp_path, "per-rater")
    answers = {
        "q1": {"category": "built", "grounds": "g"},
        "q2": {"category": "some", "grounds": "g"},
    }
    for rater, secs in (("ann", [4.0, 30.0, 50.0, 70.0, 90.0, 10.0]), ("bob", [20.0] * 6)):
        s = RatingSession(pack, rater)
        for item, t in zip(s.order, secs, strict=True):
            s.save(item, answers, timing=("2026-12-02T06:00:00.000Z", t))
    from curiosity_tui.packs.pack_agreement import format_agreement, pack_agreement

    rep = pack_agreement(pack, n_boot=20, min_seconds=15)
    timing = {t.rater: t for t in rep.timing}
    assert timing["ann"].median_seconds == pytest.approx(40.0) and timing["ann"].timed == 6
    assert len(timing["ann"].too_fast) == 2 and timing["bob"].too_fast == []
    q1 = [x for x in rep.by_position if x.question == "q1"]
    assert [x.tercile for x in q1] == [1, 2, 3]
    assert sum(x.pairs for x in q1) == 12 and all(x.agreement == 1.0 for x in q1 if x.pairs)
    text = format_agreement(rep)
    assert "ann: median time per item 40.0 s (6 of 6 timed)" in text
    assert "2 rating(s) saved in under 15 s" in text and "position tercile 1" in text
    out = tmp_path / "ratings.csv"
    assert main(["ratings", "export", str(pack), "--csv", str(out)]) == 0
    header = out.read_text().splitlines()[0]
    assert header.endswith("position,order_seed,shown_at,seconds_on_item")


def test_ratings_import_checks_the_recorded_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = _pack(tmp_path, "per-rater")
    copy = tmp_path / "copy"
    assert main(["pack", "export", str(pack), "--rater", "bob", "--out", str(copy)]) == 0
    s = RatingSession(copy, "bob")
    answers = {
        "q1": {"category": "built", "grounds": "g"},
        "q2": {"category": "some", "grounds": "g"},
    }
    for item in s.order[:2]:
        s.save(item, answers)
    src = copy / "ratings" / "bob.jsonl"
    good = src.read_text()
    bad = tmp_path / "bad" / "bob.jsonl"
    bad.parent.mkdir()
    records = [json.loads(x) for x in good.splitlines()]
    records[1]["position"] = 1
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    capsys.readouterr()
    assert main(["ratings", "import", str(pack), str(bad)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "record 2" in err and "in this rater's order" in err
    records[1]["position"], records[1]["order_seed"] = 2, "0" * 16
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["ratings", "import", str(pack), str(bad)]) != 0
    assert "is not this rater's" in capsys.readouterr().err
    assert main(["ratings", "import", str(pack), str(src)]) == 0
