"""Rating domain: verbatim quotes, validation, atomic saves, resume, revisions, isolation."""

from __future__ import annotations

import builtins
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.pack import Pack, PackError, default_key_path
from curiosity_tui.packs.rating import (
    RaterNameError,
    RatingError,
    RatingSession,
    check_quote,
    normalise_ws,
    read_ratings,
    validate_rater_name,
)
from curiosity_tui.packs.schemes import load_scheme

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, seed=7)
    return out


def good_answers(quote: str | None = "Nuremberg produced roughly 40-50%") -> dict:
    return {
        "q1": {"category": "built", "grounds": "works on the listed question"},
        "q2": {"category": "some", "grounds": "one figure", "quotes": [quote] if quote else []},
    }


def test_normalise_ws() -> None:
    assert normalise_ws("  a\n\tb   c ") == "a b c"


def test_quote_check_whitespace_normalised_and_reasons() -> None:
    sections = ["alpha  beta\ngamma", "", "delta"]
    assert check_quote("beta gamma", sections).ok
    assert check_quote("alpha\n beta", sections).section == 1
    bad = check_quote("beta gamma delta", sections)
    assert not bad.ok and "section 1" in bad.reason and "section ends there" in bad.reason
    assert "empty" in check_quote("   ", sections).reason
    assert not check_quote("Beta", sections).ok  # case matters: verbatim
    assert "first character" in check_quote("zzz", sections).reason


@pytest.mark.parametrize("name", ["ann", "Bob_2", "r.1", "x-y"])
def test_valid_rater_names(name: str) -> None:
    assert validate_rater_name(name) == name


@pytest.mark.parametrize("name", ["", "../x", "a/b", "a\\b", ".hidden", "a b", "x" * 65, ".."])
def test_invalid_rater_names(name: str) -> None:
    with pytest.raises(RaterNameError):
        validate_rater_name(name)


def test_save_resume_and_revisions(pack: Path) -> None:
    s = RatingSession(pack, "ann")
    assert (s.done(), s.n, s.resume_index()) == (0, 6, 0)
    first, second = s.order[0], s.order[1]
    s.save(first, good_answers())
    s.save(second, good_answers(None))
    again = RatingSession(pack, "ann")  # a fresh process would do exactly this
    assert again.done() == 2 and again.resume_index() == 2
    rec = again.save(
        first, {**good_answers(), "q1": {"category": "fresh", "grounds": "changed mind"}}
    )
    assert rec.revision == 1
    recs = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [r.revision for r in recs] == [0, 0, 1]
    assert recs[0].answers["q1"].category == "built"  # never overwritten
    assert again.latest()[first].answers["q1"].category == "fresh"
    assert len(again.history(first)) == 2


def test_all_rated_resume_points_at_last(pack: Path) -> None:
    s = RatingSession(pack, "ann")
    for item in s.order:
        s.save(item, good_answers(None))
    assert s.complete() and RatingSession(pack, "ann").resume_index() == s.n - 1


@pytest.mark.parametrize(
    ("answers", "fragment"),
    [
        ({"q1": {"category": "built", "grounds": "x"}}, "q2: no category"),
        ({**good_answers(), "q1": {"category": "built", "grounds": "   "}}, "grounds are required"),
        ({**good_answers(), "q1": {"category": "maybe", "grounds": "x"}}, "not one of"),
        (good_answers("Nuremberg produced roughly 99%"), "not verbatim"),
        (
            {
                **good_answers(),
                "q2": {"category": "many", "grounds": "g", "quotes": ["Reprints"] * 2},
            },
            "twice",
        ),
        (
            {
                **good_answers(),
                "q2": {
                    "category": "many",
                    "grounds": "g",
                    "quotes": ["Reprints", "travelled", "along", "trade"],
                },
            },
            "at most 3",
        ),
        ({**good_answers(), "q9": {"category": "x", "grounds": "y"}}, "unknown question"),
    ],
)
def test_invalid_ratings_are_refused_and_not_saved(
    pack: Path, answers: dict, fragment: str
) -> None:
    s = RatingSession(pack, "ann")
    with pytest.raises(RatingError, match=fragment):
        s.save(s.order[0], answers)
    assert not (pack / "ratings" / "ann.jsonl").exists()


def test_min_quotes_enforced_by_pilot02(tmp_path: Path) -> None:
    out = tmp_path / "p2"
    build_pack(hand_made_materials(), load_scheme("pilot-02"), out, seed=1)
    s = RatingSession(out, "ann")
    with pytest.raises(RatingError, match="at least 1 quote"):
        s.save(
            s.order[0],
            {
                "q1": {"category": "repeated", "grounds": "g"},
                "q2": {"category": "none", "grounds": "g"},
            },
        )


def test_rating_never_opens_key_or_other_raters(
    pack: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    RatingSession(pack, "bob").save(Pack.open(pack).order[0], good_answers())
    key = default_key_path(pack)
    opened: list[str] = []
    real_open = builtins.open
    real_io_open = io.open

    def spy(file, *a, **k):  # type: ignore[no-untyped-def]
        opened.append(str(file))
        if str(file) == str(key):
            raise PermissionError("key is unreadable")
        return real_open(file, *a, **k)

    def spy_io(file, *a, **k):  # type: ignore[no-untyped-def]
        opened.append(str(file))
        return real_io_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy_io)
    real_os_open = os.open

    def spy_os(path, *a, **k):  # type: ignore[no-untyped-def]
        opened.append(str(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr(os, "open", spy_os)
    key.chmod(0)  # unreadable (root ignores the mode, hence the spies)
    try:
        s = RatingSession(pack, "ann")
        for item in s.order[:2]:
            s.save(item, good_answers())
        assert s.done() == 2
    finally:
        key.chmod(0o644)
    assert not any(p.endswith(".key.json") for p in opened)
    assert not any("bob" in p for p in opened)


def test_rating_works_with_key_moved_away(pack: Path, tmp_path: Path) -> None:
    key = default_key_path(pack)
    key.rename(tmp_path / "elsewhere.json")
    s = RatingSession(pack, "ann")
    s.save(s.order[0], good_answers())
    assert s.done() == 1


def test_damaged_items_or_ratings_are_named(pack: Path) -> None:
    s = RatingSession(pack, "ann")
    s.save(s.order[0], good_answers())
    path = pack / "ratings" / "ann.jsonl"
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(RatingError, match=r"ann\.jsonl:2"):
        RatingSession(pack, "ann")
    items = pack / "items.jsonl"
    items.write_text(items.read_text().replace("Reprints", "Reprint"))
    with pytest.raises(PackError, match="sha256"):
        Pack.open(pack)


_CHILD = """
import sys
sys.path.insert(0, {repo!r})
from curiosity_tui.packs.rating import RatingSession
s = RatingSession({pack!r}, "ann")
answers = {{"q1": {{"category": "built", "grounds": "g" * 2000}},
           "q2": {{"category": "none", "grounds": "h"}}}}
i = 0
while True:
    s.save(s.order[i % s.n], answers)
    i += 1
"""


def test_sigkill_during_saves_leaves_a_whole_file(pack: Path) -> None:
    code = _CHILD.format(repo=str(REPO), pack=str(pack))
    proc = subprocess.Popen([sys.executable, "-c", code])
    path = pack / "ratings" / "ann.jsonl"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if path.exists() and path.stat().st_size > 200_000:
                break
            time.sleep(0.05)
        seen = len(read_ratings(path))
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    recs = read_ratings(path)  # every line parses: no torn write
    assert len(recs) >= seen > 10
    assert [r.revision for r in recs if r.item == recs[0].item] == list(
        range(sum(1 for r in recs if r.item == recs[0].item))
    )
    s = RatingSession(pack, "ann")
    assert s.done() == s.n
