"""The independent recomputation's mismatches (issue 24 item 6), each on a hand-made fixture.

Each test here failed before its fix: the figure the code gave differed from the documented
definition (docs/protocol.md, docs/decisions/420-423).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.analysis import relay
from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.relay_tables import format_relay_tables
from curiosity_tui.analysis.rundata import RunData, RunSession, write_run_file
from curiosity_tui.analysis.signature import QuestionSignature, SignatureItem, signature_of
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession, read_ratings
from curiosity_tui.packs.schemes import load_scheme

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
    missing = {"item": second, "position": 2, "answers": {}, "missing": "could not judge"}
    records.append({**records[0], **missing})
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


# ------------------------------------------------------ voluntary progression: sessions 2-5


def test_voluntary_progression_is_over_sessions_two_to_five() -> None:
    from curiosity_tui.analysis.metrics import voluntary_progression, voluntary_progression_raw
    from curiosity_tui.analysis.rundata import RunCounts

    def session(t: int, actions: int, questions: int) -> RunSession:
        counts = RunCounts(voluntary_actions=actions, dependency_checks=1)
        return RunSession(session=t, focus="q1", counts=counts, questions=["q?"] * questions)

    # sessions 2-5: 1/(1+1), 3/(3+1), 0/(0+2), 2/(2+2) -> mean (.5 + .75 + 0 + .5)/4 = .4375;
    # sessions 6-8 (all voluntary) are outside the report's range
    plan = [(1, 9, 1), (2, 1, 1), (3, 3, 1), (4, 0, 2), (5, 2, 2), (6, 4, 0), (7, 4, 0), (8, 4, 0)]
    run = RunData(config="C+cur", run_id="r8", sessions=[session(*x) for x in plan])
    assert voluntary_progression(run) == pytest.approx(0.4375)
    # raw: forced focus and one check added to both terms: 3/4, 5/6, 2/4, 4/6
    assert voluntary_progression_raw(run) == pytest.approx((3 / 4 + 5 / 6 + 2 / 4 + 4 / 6) / 4)


# ------------------------------------------------ structural measures from the final snapshot


def test_structural_measures_come_from_the_final_snapshot_not_the_journal_end(
    tmp_path: Path,
) -> None:
    from curiosity_tui.analysis.metrics import live_nodes
    from curiosity_tui.ledger.curation import archive, finish_curation
    from tests.ledger_builders import build

    led = build(tmp_path / "run", 3)  # q1 + one new question a session: 4 live nodes
    try:
        before = RunData.from_ledger(led)
        assert live_nodes(before) == 4
        # a curator acts after the last session: two archives, then its snapshot
        archive(led, "q2", "duplicate of the seed", "human:ana")
        archive(led, "q3", "off topic", "human:ana")
        assert sum(1 for n in led.raw_nodes().values() if n["status"] != "archived") == 2
        run = RunData.from_ledger(led)
        assert live_nodes(run) == 4 and run.nodes == before.nodes
        finish_curation(led)
        assert RunData.from_ledger(led).nodes == before.nodes
    finally:
        led.close()


# ------------------------------------------------------------------------------ relay drift


def _sig(session: int, text: str, facts: list[str], living: list[str]) -> QuestionSignature:
    return QuestionSignature(
        session=session,
        text=text,
        required_facts=[SignatureItem(id=f"q1.r{i}", text=t) for i, t in enumerate(facts, 1)],
        required_actions=["compare the regions"],
        closure_tests=["a regional comparison exists"],
        living=[SignatureItem(id=f"q{i}", text=t) for i, t in enumerate(living, 2)],
    )


def _two_session_run() -> RunData:
    seed = "Did the printing press cause the Reformation?"
    sigs = [
        _sig(0, seed, [], []),
        _sig(1, seed, ["printing output by 1520"], ["Who printed Luther's pamphlets?"]),
        _sig(
            2,
            seed,
            ["printing output by 1520", "literacy rates in Saxony"],
            ["Who printed Luther's pamphlets?", "Which cities had presses by 1500?"],
        ),
    ]
    return RunData(
        config="C-cur",
        run_id="two",
        sessions=[RunSession(session=1, focus="q1"), RunSession(session=2, focus="q1")],
        signatures=sigs,
    )


def _relay_values(run: RunData) -> dict[str, float | None]:
    relay._CACHE.clear()
    reg = default_registry()
    return {m.name: m(run) for m in reg if m.group == "relay"}


def test_step_and_total_drift_agree_for_the_same_pair_of_states() -> None:
    run = _two_session_run()
    got = _relay_values(run)
    # one handover (session 2): its step drift and the run's total drift compare S(1), S(2)
    assert got["relay_drift_step_mean"] is not None and got["relay_drift_step_mean"] > 0
    assert got["relay_drift_step_mean"] == got["relay_drift_total"]
    assert got["relay_drift_total"] == relay.pair_drift(run.signatures[1], run.signatures[2])[0]


def test_a_run_without_a_root_question_has_drift_undefined_and_out_of_means() -> None:
    from curiosity_tui.analysis.aggregate import aggregate_metric

    empty = [signature_of({}, t) for t in range(3)]  # arms A and B: no store, no root
    a_run = RunData(
        config="C-cur",
        run_id="a",
        sessions=[RunSession(session=1), RunSession(session=2)],
        signatures=empty,
    )
    hs = relay.handovers(a_run)
    assert [h.drift for h in hs] == [None, None]
    assert all("no root question" in (h.drift_undefined or "") for h in hs)
    got = _relay_values(a_run)
    assert got["relay_drift_step_mean"] is None and got["relay_drift_total"] is None
    # a run file written before: root id kept, empty text: still undefined, never 1.0
    old = a_run.model_copy(update={"signatures": [QuestionSignature(session=t) for t in range(3)]})
    assert _relay_values(old)["relay_drift_total"] is None
    c_run = _two_session_run()
    relay._CACHE.clear()
    agg = aggregate_metric([a_run, c_run], "relay_drift_total", "C-cur")
    assert (agg.n, agg.n_missing) == (1, 1)
    assert agg.value == relay.drift_total(c_run)
    table = format_relay_tables([a_run.model_copy(update={"sessions": _minded(a_run)})])
    assert "— (no root question" in table


def _minded(run: RunData) -> list[RunSession]:
    mind = {"kind": "model", "name": "m", "endpoint": None}
    return [RunSession(session=s.session, mind=mind) for s in run.sessions]  # type: ignore[call-arg]


def test_curator_changes_enter_neither_drift(tmp_path: Path) -> None:
    from curiosity_tui.ledger.curation import archive, finish_curation
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.ledger.models import RunMeta
    from tests.ledger_builders import SEED, run_session

    led = Ledger.create(tmp_path / "run", RunMeta(name="run", seed=SEED, config="C+cur"))
    try:
        run_session(led, 1, focus="q1", new=2)  # q2, q3 under q1
        archive(led, "q2", "a duplicate", "model-curator")  # the curator, between sessions
        archive(led, "q3", "off topic", "model-curator")
        finish_curation(led)
        run_session(led, 2, focus="q1", new=1)
        run = RunData.from_ledger(led)
        handed = signature_of(led.snapshot(1, "curator"), 2)
    finally:
        led.close()
    s1, s2 = run.signatures[1], run.signatures[2]
    assert [q.id for q in s1.living] == ["q2", "q3"] and not handed.living
    h2 = relay.handovers(run)[1]
    assert h2.carried == len(handed.required_facts) == 2  # q2, q3 were not handed over
    assert h2.survived == 2
    # session 2 is measured against what it was handed (after the curator), not S(1)
    assert h2.drift == relay.pair_drift(handed, s2)[0]
    assert h2.drift != relay.pair_drift(s1, s2)[0]
