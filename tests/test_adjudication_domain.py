"""Adjudication in the domain: which items disagree, when recording is refused, revisions,
damaged files named by line, raw ratings unchanged byte for byte, agreement on raw ratings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.packs.adjudication import (
    AdjudicationError,
    adjudication_path,
    read_adjudications,
)
from curiosity_tui.packs.disagreement import adjudicate, adjudication_state
from curiosity_tui.packs.pack import Pack, PackError
from curiosity_tui.packs.pack_agreement import pack_agreement
from curiosity_tui.packs.unblind import PackLog, unblind
from tests.adjudication_fixtures import MARKUP_GROUNDS, build_rated_pack


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    return build_rated_pack(tmp_path)


def _raw_bytes(pack: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((pack / "ratings").glob("*.jsonl"))}


def test_disagreements_are_the_items_and_questions_where_categories_differ(pack: Path) -> None:
    order = Pack.open(pack).order
    state = adjudication_state(pack)
    assert state.complete and state.key_opened is None and state.raters == ["ann", "bob"]
    assert [(d.item, d.question) for d in state.disagreements] == [
        (order[0], "q1"),
        (order[0], "q2"),
        (order[1], "q1"),
    ]
    first = state.disagreements[0]
    assert first.raw == {"ann": "built", "bob": "fresh"}
    assert first.raters[0].grounds == MARKUP_GROUNDS
    assert state.disagreements[1].raters[0].quotes  # ann quoted the item on q2


def test_nothing_is_listed_or_recorded_while_ratings_are_incomplete(tmp_path: Path) -> None:
    pack = build_rated_pack(tmp_path, upto=4)
    state = adjudication_state(pack)
    assert not state.complete and state.disagreements == []
    assert "bob (2 of 6)" in state.reason
    item = Pack.open(pack).order[0]
    with pytest.raises(AdjudicationError, match="ratings are incomplete"):
        adjudicate(pack, item, "q1", "fresh", "it starts over", by="cy")
    assert not adjudication_path(pack).exists()


def test_record_revise_and_refusals(pack: Path) -> None:
    before = _raw_bytes(pack)
    order = Pack.open(pack).order
    rec = adjudicate(pack, order[0], "q1", "fresh", "  section 3 starts  over ", by="cy")
    assert (rec.seq, rec.adjudicator, rec.grounds, rec.replaces) == (
        1,
        "human:cy",
        "section 3 starts over",
        None,
    )
    assert rec.raw == {"ann": "built", "bob": "fresh"}
    with pytest.raises(AdjudicationError, match=r"already adjudicated \(record 1, fresh\)"):
        adjudicate(pack, order[0], "q1", "built", "on second thoughts", by="cy")
    with pytest.raises(AdjudicationError, match="must name it"):
        adjudicate(pack, order[0], "q1", "built", "on second thoughts", by="cy", replaces=7)
    rev = adjudicate(pack, order[0], "q1", "built", "on second thoughts", by="cy", replaces=1)
    assert (rev.seq, rev.replaces) == (2, 1)
    with pytest.raises(AdjudicationError, match="has no adjudication to replace"):
        adjudicate(pack, order[1], "q1", "built", "grounds", by="cy", replaces=1)
    with pytest.raises(AdjudicationError, match="do not disagree"):
        adjudicate(pack, order[3], "q1", "built", "grounds", by="cy")
    with pytest.raises(AdjudicationError, match="'many' is not a category of q1"):
        adjudicate(pack, order[1], "q1", "many", "grounds", by="cy")
    with pytest.raises(AdjudicationError, match="grounds are required"):
        adjudicate(pack, order[1], "q1", "built", " \n ", by="cy")
    with pytest.raises(AdjudicationError, match="invalid coordinator name"):
        adjudicate(pack, order[1], "q1", "built", "grounds", by="c y")
    with pytest.raises(PackError, match="no item 'i00000000'"):
        adjudicate(pack, "i00000000", "q1", "built", "grounds", by="cy")
    state = adjudication_state(pack)
    assert state.disagreements[0].adjudication == rev and len(state.records) == 2
    assert _raw_bytes(pack) == before  # the raw ratings never change
    lines = adjudication_path(pack).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2  # append-only: the first record is still there
    assert json.loads(lines[0])["category"] == "fresh"


def test_refused_once_the_key_is_opened(pack: Path) -> None:
    order = Pack.open(pack).order
    adjudicate(pack, order[0], "q1", "fresh", "starts over", by="cy")
    unblind(pack, by="human:cy")
    seq = next(e.seq for e in PackLog(pack).entries() if e.kind == "key_opened")
    with pytest.raises(AdjudicationError, match=f"the key was opened \\(pack log seq {seq}\\)"):
        adjudicate(pack, order[1], "q1", "fresh", "starts over", by="cy")
    assert len(read_adjudications(Pack.open(pack))) == 1


def test_stale_when_a_rater_revises_after_adjudication(pack: Path) -> None:
    from curiosity_tui.packs.rating import RatingSession

    order = Pack.open(pack).order
    adjudicate(pack, order[1], "q1", "fresh", "starts over", by="cy")
    RatingSession(pack, "ann").save(
        order[1],
        {
            "q1": {"category": "fresh", "grounds": "revised"},
            "q2": {"category": "none", "grounds": "g"},
        },
    )
    state = adjudication_state(pack)
    assert (order[1], "q1") not in [(d.item, d.question) for d in state.disagreements]
    assert len(state.records) == 1  # the record stays; it is simply no longer a disagreement


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "damaged adjudication record"),
        ('{"seq": 1}', "damaged adjudication record (pack_id: Field required)"),
    ],
)
def test_damaged_file_is_named_with_its_line(pack: Path, line: str, problem: str) -> None:
    order = Pack.open(pack).order
    adjudicate(pack, order[0], "q1", "fresh", "starts over", by="cy")
    path = adjudication_path(pack)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    with pytest.raises(
        AdjudicationError, match=f"{path}:2: " + problem.replace("(", r"\(").replace(")", r"\)")
    ):
        adjudication_state(pack)


def test_copied_or_edited_records_are_named(pack: Path) -> None:
    order = Pack.open(pack).order
    adjudicate(pack, order[0], "q1", "fresh", "starts over", by="cy")
    path = adjudication_path(pack)
    first = path.read_text(encoding="utf-8")
    path.write_text(first + first, encoding="utf-8")
    with pytest.raises(AdjudicationError, match=f"{path}:2: record seq 1, expected 2"):
        adjudication_state(pack)
    rec = json.loads(first)
    rec["category"] = "many"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(AdjudicationError, match=f"{path}:1: 'many' is not a category of q1"):
        adjudication_state(pack)
    rec["category"], rec["seq"] = "fresh", 2
    second = dict(rec, category="built")  # a second record that names nothing it replaces
    path.write_text(first + json.dumps(second) + "\n", encoding="utf-8")
    with pytest.raises(AdjudicationError, match=f"{path}:2: .* a revision must name it"):
        adjudication_state(pack)


def test_agreement_uses_the_raw_ratings_only(pack: Path) -> None:
    before = pack_agreement(pack, n_boot=50).model_dump()
    order = Pack.open(pack).order
    adjudicate(pack, order[0], "q1", "built", "builds on session one", by="cy")
    adjudicate(pack, order[1], "q1", "built", "builds on session one", by="cy")
    assert pack_agreement(pack, n_boot=50).model_dump() == before
    from curiosity_tui.packs.pack_agreement import format_agreement

    assert "basis: raw ratings only" in format_agreement(pack_agreement(pack, n_boot=50))


def test_unblind_exports_adjudications_apart_from_raw_tables(pack: Path) -> None:
    from curiosity_tui.packs.adjudication import adjudication_path as apath
    from curiosity_tui.packs.pack import sha256_bytes
    from curiosity_tui.packs.unblind_text import format_unblind

    order = Pack.open(pack).order
    adjudicate(pack, order[0], "q1", "fresh", "starts over", by="cy")
    adjudicate(pack, order[0], "q1", "built", "on reflection it builds", by="cy", replaces=1)
    adjudicate(pack, order[1], "q1", "fresh", "starts over", by="cy")
    rep = unblind(pack, by="human:cy")
    entry = PackLog(pack).entries()[-1]
    assert entry.data["adjudication"] == {
        "sha256": sha256_bytes(apath(pack).read_bytes()),
        "records": 3,
    }
    rows = {(a.item, a.question): a for a in rep.adjudicated}
    assert set(rows) == {(order[0], "q1"), (order[1], "q1")}
    assert rows[(order[0], "q1")].adjudicated == "built" and rows[(order[0], "q1")].replaces == 1
    assert rows[(order[0], "q1")].raw == {"ann": "built", "bob": "fresh"}
    # raw tables: every rating counts, both raters' categories; two runs split on q1
    q1 = next(t for t in rep.tables if t.question == "q1")
    assert sum(sum(r.values()) for r in q1.by_rating.values()) == 2 * len(order)
    assert sum(r["split"] for r in q1.by_run.values()) == 2
    # the adjudicated set: the split runs take the adjudicated category
    adj = next(t for t in rep.adjudicated_tables if t.question == "q1")
    assert adj.by_rating == {} and sum(r["split"] for r in adj.by_run.values()) == 0
    assert sum(r["fresh"] for r in adj.by_run.values()) == 1
    assert (
        sum(r["built"] for r in adj.by_run.values())
        == sum(r["built"] for r in q1.by_run.values()) + 1
    )
    text = format_unblind(rep)
    raw_part, adj_part = text.split("\nadjudicated (", 1)
    assert "adjudicated" not in raw_part.replace("unblinded", "")
    assert "q1 — adjudicated set: runs per configuration" in adj_part
    assert (
        f"{order[0]}" in adj_part
        and "→ adjudicated built by human:cy (record 2, revises record 1)" in adj_part
    )


def test_cli_list_and_one_line_errors(pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from curiosity_tui.cli import main

    order = Pack.open(pack).order
    adjudicate(pack, order[0], "q1", "fresh", "starts over", by="cy")
    assert main(["adjudication", "list", str(pack)]) == 0
    out = capsys.readouterr().out
    assert "3 disagreement(s), 1 adjudicated" in out and "key: closed (adjudication open)" in out
    assert (
        f"  {order[0]}  q1  ann=built  bob=fresh  → adjudicated fresh by human:cy (record 1)" in out
    )
    assert f"  {order[1]}  q1  ann=built  bob=fresh  → not adjudicated" in out
    assert main(["adjudication", "list", str(pack), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["disagreements"]) == 3 and data["records"][0]["category"] == "fresh"
    # bad input: one line on stderr, no traceback
    with adjudication_path(pack).open("a", encoding="utf-8") as fh:
        fh.write("{broken\n")
    cases = [
        (["adjudication", "list", str(pack)], f"{adjudication_path(pack)}:2: damaged"),
        (["adjudication", "list", str(pack / "nope")], "no such pack directory"),
        (["adjudicate", str(pack), "--coordinator", "c y"], "invalid coordinator name"),
        (["adjudicate", str(pack), "--coordinator", "cy"], f"{adjudication_path(pack)}:2: damaged"),
    ]
    for argv, problem in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("curiosity-tui: error:") and err.count("\n") == 1 and problem in err


def test_cli_unblind_prints_adjudications_labelled(
    pack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.cli import main

    order = Pack.open(pack).order
    adjudicate(pack, order[1], "q1", "fresh", "starts over", by="cy")
    assert main(["unblind", str(pack), "--by", "cy", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [(a["item"], a["adjudicated"]) for a in rep["adjudicated"]] == [(order[1], "fresh")]
    assert main(["adjudication", "list", str(pack)]) == 0
    assert "adjudication closed" in capsys.readouterr().out


def test_a_damaged_adjudication_file_stops_unblind_before_the_key_opens(pack: Path) -> None:
    order = Pack.open(pack).order
    adjudicate(pack, order[0], "q1", "fresh", "starts over", by="cy")
    with adjudication_path(pack).open("a", encoding="utf-8") as fh:
        fh.write("{broken\n")
    with pytest.raises(AdjudicationError, match=":2: damaged"):
        unblind(pack, by="human:cy")
    assert [e.kind for e in PackLog(pack).entries()] == ["pack_built"]
