"""The independent recomputation's mismatches (issue 24 item 6), each on a hand-made fixture.

Each test here failed before its fix: the figure the code gave differed from the documented
definition (docs/protocol.md, docs/decisions/420-423).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession, read_ratings
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.packs.synthetic import hand_made_materials

# ------------------------------------------------------------ ratings import: `missing` records


def test_ratings_import_accepts_the_documented_missing_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), pack, seed=11)
    copy = tmp_path / "copy"
    assert main(["pack", "export", str(pack), "--rater", "ann", "--out", str(copy)]) == 0
    s = RatingSession(copy, "ann")
    first, second = s.order[0], s.order[1]
    s.save(
        first,
        {
            "q1": {"category": "built", "grounds": "g"},
            "q2": {"category": "some", "grounds": "g"},
        },
    )
    src = copy / "ratings" / "ann.jsonl"
    records = [json.loads(x) for x in src.read_text().splitlines()]
    # the documented shape (RatingRecord.missing): why there is none, answers empty
    records.append({**records[0], "item": second, "answers": {}, "missing": "could not judge"})
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    capsys.readouterr()
    assert main(["ratings", "import", str(pack), str(src)]) == 0, capsys.readouterr().err
    stored = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [(r.item, r.missing) for r in stored] == [(first, None), (second, "could not judge")]
    # a `missing` record that also carries answers is still refused, in one line
    bad = tmp_path / "bad" / "bob.jsonl"
    bad.parent.mkdir()
    rec = {**records[1], "rater": "bob", "answers": records[0]["answers"]}
    bad.write_text(json.dumps(rec) + "\n")
    capsys.readouterr()
    assert main(["ratings", "import", str(pack), str(bad)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "missing" in err and "record 1" in err, err
