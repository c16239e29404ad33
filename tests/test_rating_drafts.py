"""Drafts survive a kill: the rating screen writes the item being typed to the rater's drafts
file, a SIGKILLed `curiosity-tui rate` reopens at that item with the draft, saving deletes it,
and nothing that reads ratings ever reads it."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest
from test_rating_pty import Term

from curiosity_tui.app import RatingApp
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.drafts import DraftStore, drafts_path
from curiosity_tui.packs.export import export_for_rater
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.pack_agreement import pack_agreement
from curiosity_tui.packs.rating import RatingSession, read_ratings
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.packs.unblind import completeness


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, seed=2)
    return out


def _wait_gone(path: Path, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while path.exists():
        if time.monotonic() > end:
            raise AssertionError(f"{path} was never deleted")
        time.sleep(0.1)


def _wait_file(path: Path, text: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and text in path.read_text(encoding="utf-8"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} never held {text!r}")


@pytest.mark.pty
@pytest.mark.skipif(sys.platform != "linux", reason="pty driving is tested on Linux")
def test_sigkill_mid_draft_then_reopen_brings_the_draft_back(pack: Path) -> None:
    drafts = drafts_path(pack, "ann")
    ratings = pack / "ratings" / "ann.jsonl"
    order = RatingSession(pack, "ann").order
    t = Term(["rate", str(pack), "--rater", "ann"])
    try:
        t.wait_for(r"item 1 of 6", timeout=60)
        t.send("b\rfirst item grounds\rn\rnone here\r\r\x13", 0)  # item 1, saved
        t.wait_for(r"item 2 of 6", timeout=60)
        t.send("f")
        t.send("typed but never saved")
        _wait_file(drafts, "typed but never saved")
    finally:
        t.kill()
    assert t.proc.returncode == -signal.SIGKILL
    assert [r.item for r in read_ratings(ratings)] == [order[0]]
    kept = json.loads(drafts.read_text())
    assert kept["current"] == order[1]
    assert kept["drafts"][order[1]]["categories"] == {"q1": "fresh", "q2": None}

    t2 = Term(["rate", str(pack), "--rater", "ann"])
    try:
        t2.wait_for(r"item 2 of 6 \(" + order[1] + r"\)", timeout=60)
        # the message line is below the scrolling form, always in view (decision 512)
        t2.wait_for(r"unsaved draft of this item is back", timeout=60)
        t2.wait_for(r"typed but never saved", timeout=60)
        t2.send("\r\rs\rone figure\r\r\x13", 0)  # finish the draft and save it
        t2.wait_for(r"item 3 of 6", timeout=60)
        _wait_gone(drafts)  # the save deletes the draft: wait for that, not for a fixed time
    finally:
        t2.kill()
    recs = read_ratings(ratings)
    assert [r.item for r in recs] == order[:2]
    assert recs[1].answers["q1"].category == "fresh"
    assert recs[1].answers["q1"].grounds == "typed but never saved"
    assert not drafts.exists()  # deleted on save: no draft left


async def test_drafts_on_two_items_kept_resumed_and_never_read_as_ratings(
    pack: Path, tmp_path: Path
) -> None:
    app = RatingApp(pack, "ann")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("b", *"draft one", "escape", "right_square_bracket")
        await pilot.press("f", *"draft two", "escape")
    drafts = drafts_path(pack, "ann")
    kept = json.loads(drafts.read_text())
    order = RatingSession(pack, "ann").order
    assert sorted(kept["drafts"]) == sorted(order[:2]) and kept["current"] == order[1]
    # nothing reading ratings sees a draft: no rater, no records, and the copy leaves it out
    assert completeness(Pack.open(pack)).raters == []
    assert pack_agreement(pack, n_boot=0).raters == []
    export_for_rater(pack, "ann", tmp_path / "copy")
    assert not drafts_path(tmp_path / "copy", "ann").exists()
    app2 = RatingApp(pack, "ann")
    async with app2.run_test(size=(160, 50)):
        scr = app2.rating_screen
        assert scr.item_id == order[1] and scr.categories["q1"] == "fresh"
        assert [s for _, s in scr.item_marks()[:2]] == ["unrated · draft", "unrated · draft"]


def test_a_damaged_drafts_file_is_set_aside_and_bad_entries_dropped(pack: Path) -> None:
    p = Pack.open(pack)
    path = drafts_path(pack, "ann")
    path.parent.mkdir(exist_ok=True)
    path.write_text("{not json")
    store = DraftStore(p, "ann")
    assert store.load().drafts == {}
    assert "damaged" in store.note and path.with_name(path.name + ".damaged").exists()
    assert not path.exists()
    body = {
        "pack_id": p.manifest.pack_id,
        "rater": "ann",
        "current": "nope",
        "drafts": {
            p.order[0]: {"categories": {"q1": "invented", "q2": "some"}, "grounds": {"q1": "g"}},
            "not-an-item": {"categories": {"q1": "built"}},
        },
    }
    path.write_text(json.dumps(body))
    got = DraftStore(p, "ann").load()
    assert list(got.drafts) == [p.order[0]] and got.current is None
    assert got.drafts[p.order[0]].categories == {"q1": None, "q2": "some"}
    path.write_text(json.dumps({**body, "rater": "bob"}))  # another rater's drafts
    assert DraftStore(p, "ann").load().drafts == {}
