"""The independent recomputation's mismatches (issue 24 item 6), each on a hand-made fixture.

Each test here failed before its fix: the figure the code gave differed from the documented
definition (docs/protocol.md, docs/decisions/420-423).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.analysis.rundata import RunData, RunSession, write_run_file
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


# ------------------------------------------------------------------ ε sweep: rounding, contracts

#: Δ values as `after - before` gives them unrounded at three of the seven default thresholds
#: (tension (D + F/5 + U/8)/3 with D = 0.3; the PRESERVE decision rounds them to 12 places
#: first, so each is exactly -ε and ANSWERs).
BOUNDARY_DELTAS = [-0.05000000000000002, -0.15000000000000002, -0.25000000000000006, -0.5]


def test_sweep_deltas_round_as_the_preserve_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.protocol.tension import decide, delta

    at = zip(BOUNDARY_DELTAS[:3], (0.05, 0.15, 0.25), strict=True)
    assert [decide(round(d, 12), e) for d, e in at] == ["ANSWER"] * 3
    assert decide(delta(0.0, -0.15000000000000002), 0.15) == "ANSWER"
    f = tmp_path / "deltas.txt"
    f.write_text("\n".join(repr(d) for d in BOUNDARY_DELTAS) + "\n")
    capsys.readouterr()
    assert main(["sweep", "--deltas", str(f), "--json"]) == 0
    rows = {r["epsilon"]: r["preserved"] for r in json.loads(capsys.readouterr().out)[0]["rows"]}
    # at 0.05: -0.15, -0.25, -0.5 (the boundary value answers); at 0.15: -0.25, -0.5; at 0.25: -0.5
    assert (rows[0.05], rows[0.15], rows[0.25], rows[0.30]) == (3, 2, 1, 1)


def _delta_run(run_id: str, contract: str, deltas: list[float]) -> RunData:
    sessions = [
        RunSession(session=i, decision="PRESERVE" if d < -0.15 else "ANSWER", delta=d, epsilon=0.15)
        for i, d in enumerate(deltas, start=1)
    ]
    return RunData(config="C+cur", run_id=run_id, contract=contract, sessions=sessions)


def test_sweep_and_the_report_never_pool_contracts(tmp_path: Path) -> None:
    from curiosity_tui.analysis.report import build_report
    from curiosity_tui.analysis.sweep import sweep_runs

    # C+cur: 5 of 5 preserved under pilot-01 (one run), 10 of 15 under pilot-02 (three runs)
    runs = [_delta_run("r0", "pilot-01", [-0.3] * 5)]
    runs += [_delta_run(f"s{k}", "pilot-02", [-0.3, -0.3, -0.3, 0.1, 0.1]) for k in range(2)]
    runs += [_delta_run("s2", "pilot-02", [-0.3, -0.3, -0.3, -0.3, 0.1])]
    got = {r.label: r for r in sweep_runs(runs)}
    assert sorted(got) == ["C+cur@pilot-01", "C+cur@pilot-02"]
    at = {k: next(x for x in r.rows if x.epsilon == 0.15) for k, r in got.items()}
    assert (at["C+cur@pilot-01"].preserved, at["C+cur@pilot-01"].n) == (5, 5)
    assert (at["C+cur@pilot-02"].preserved, at["C+cur@pilot-02"].n) == (10, 15)
    pooled = sweep_runs(runs, by_config=False)
    assert [r.label for r in pooled] == ["all@pilot-01", "all@pilot-02"]
    for r in runs:
        write_run_file(r, tmp_path / f"{r.run_id}.run.json")
    text = build_report(tmp_path)
    assert "15/20" not in text and "| 5/5 |" in text and "| 10/15 |" in text
