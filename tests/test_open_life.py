"""Open life and return latency (issue 26, items 1-2): a ledger built through the ledger API
with known lives, censoring and met conditions gives the figures computed by hand."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from curiosity_tui.analysis.open_life import open_lives
from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.return_latency import condition_returns
from curiosity_tui.analysis.rundata import RunData, load_runs
from curiosity_tui.analysis.survival import km_median, km_table, pooled_hazard
from curiosity_tui.cli import main
from curiosity_tui.ledger.batch import Batch
from curiosity_tui.ledger.events import (
    CandidatePreserved,
    DependencyChecked,
    NodeClosed,
    ReturnConditionSet,
    SessionStarted,
    StatusChanged,
)
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta, SessionRecord
from curiosity_tui.ledger.transitions import resurface

Step = Callable[[Batch], None]


def _session(led: Ledger, t: int, step: Step, focus: str | None = None, decision=None) -> None:
    with led.batch(t) as b:
        b.emit(SessionStarted(focus=focus, config="C+cur"))
        step(b)
        b.snapshot("session")
        b.record_session(SessionRecord(session=t, focus=focus, decision=decision))


def _condition(b: Batch, node: str, *ids: str) -> None:
    facts = [{"id": i, "text": f"fact {i}", "status": "unchecked"} for i in ids]
    b.emit(ReturnConditionSet(required_facts=facts), node=node, actor="model")


def _check(b: Batch, node: str, req: str, result: str = "satisfied") -> None:
    b.emit(
        DependencyChecked(
            requirement=req, claimed="satisfied", evidence_text="seen", result=result
        ),
        node=node,
        actor="model",
    )


def _status(b: Batch, node: str, to: str) -> None:
    b.emit(StatusChanged(to=to, reason="test"), node=node, actor="model-curator")


def _s1(b: Batch) -> None:
    for i in range(2, 5):
        b.create_node(f"question {i}", parent="q1", origin="new_question", actor="model")
    _condition(b, "q1", "r1", "r2")
    _condition(b, "q4", "r1")
    b.create_node(
        "question 5 (never returned to)", parent="q1", origin="new_question", actor="model"
    )
    _condition(b, "q5", "r1")
    b.create_node("question 6 (closed when met)", parent="q1", origin="new_question", actor="model")
    _condition(b, "q6", "r1")


def _s2(b: Batch) -> None:
    b.emit(NodeClosed(reason="answered"), node="q2", actor="model")
    _status(b, "q4", "dormant")
    _check(b, "q4", "r1")
    _check(b, "q1", "r1")


def _s3(b: Batch) -> None:
    _status(b, "q3", "archived")
    _check(b, "q1", "r2", "waived")


def _s4(b: Batch) -> None:
    resurface(b, "q4", "forced_focus", "system")
    q7 = b.create_node(
        "question 7 (closed at birth)", parent="q1", origin="new_question", actor="model"
    )
    b.emit(NodeClosed(reason="duplicate"), node=q7, actor="model")
    _check(b, "q5", "r1")


def _s5(b: Batch) -> None:
    resurface(b, "q1", "voluntary", "model")
    b.emit(CandidatePreserved(text="keep it open", delta=0.2), node="q1", actor="model")
    _check(b, "q6", "r1")
    b.emit(NodeClosed(reason="met"), node="q6", actor="model")


def build_run(path: Path, config: str = "C+cur") -> Path:
    """Seven questions over five sessions. Open lives (time, event):
    q1 seed (5, censored); q2 closed in 2 (1); q3 archived in 3 (2); q4 dormant in 2, back
    in 4 (4, censored); q5 (4, censored); q6 closed in 5 (4); q7 created and closed in 4 (0).
    Met conditions: q1 after 3 (r1 satisfied, r2 waived), returned in 5 and preserved; q4
    after 2 (dormant), returned in 4, answered; q5 after 4, never returned (censored at 1);
    q6 met and closed in 5 (not counted)."""
    led = Ledger.create(path, RunMeta(name=path.name, seed="Why?", config=config))
    try:
        for t, step in enumerate((_s1, _s2, _s3), start=1):
            _session(led, t, step)
        _session(led, 4, _s4, focus="q4", decision="ANSWER")
        _session(led, 5, _s5, focus="q1", decision="PRESERVE")
    finally:
        led.close()
    return path


@pytest.fixture
def run(tmp_path: Path) -> RunData:
    return load_runs([build_run(tmp_path / "run-a")])[0]


LIVES = {
    "q1": (5, False),
    "q2": (1, True),
    "q3": (2, True),
    "q4": (4, False),
    "q5": (4, False),
    "q6": (4, True),
    "q7": (0, True),
}


def test_open_lives_by_hand(run: RunData) -> None:
    lives = {q.node: q for q in open_lives(run) or []}
    assert {n: (q.time, q.event) for n, q in lives.items()} == LIVES
    assert lives["q3"].ended == "archived" and lives["q4"].ended == "open"
    assert [n for n, q in lives.items() if q.went_dormant] == ["q4"]
    assert lives["q4"].came_back


def test_survival_table_by_hand(run: RunData) -> None:
    rows = km_table(list(LIVES.values()))
    table = [(r.time, r.at_risk, r.events, r.censored) for r in rows]
    assert table == [(0, 7, 1, 0), (1, 6, 1, 0), (2, 5, 1, 0), (4, 4, 1, 2), (5, 1, 0, 1)]
    expected = [6 / 7, 5 / 7, 4 / 7, 3 / 7, 3 / 7]
    assert [r.survival for r in rows] == pytest.approx(expected)
    assert rows[3].hazard == pytest.approx(1 / 4)
    assert km_median(rows) == 4.0


def test_registry_open_life_figures(run: RunData) -> None:
    reg = default_registry()
    assert reg.get("open_life_median")(run) == 4.0
    # 4 ended lives over (6 + 2 + 3 + 5 + 5 + 5 + 1) question-sessions at risk
    assert reg.get("closure_hazard")(run) == pytest.approx(4 / 27)
    assert reg.get("dormant_share")(run) == pytest.approx(1 / 7)
    assert reg.get("dormant_return_share")(run) == 1.0


def test_return_latency_by_hand(run: RunData) -> None:
    found = {c.node: c for c in condition_returns(run) or []}
    assert set(found) == {"q1", "q4", "q5"}  # q6 closed in the session that met it
    assert (found["q1"].met, found["q1"].returned, found["q1"].latency) == (3, 5, 2)
    assert found["q1"].outcome == "preserved"
    assert (found["q4"].met, found["q4"].returned, found["q4"].outcome) == (2, 4, "answered")
    assert (found["q5"].met, found["q5"].returned, found["q5"].latency) == (4, None, 1)
    assert not found["q5"].event
    reg = default_registry()
    assert reg.get("return_never_share")(run) == pytest.approx(1 / 3)
    # KM over (2, e), (2, e), (1, censored): S(1) = 1, S(2) = 0
    assert reg.get("return_latency_median")(run) == 2.0
    # k = 2: q5 was followed for 1 session only and is left out; both others came back in 2
    assert reg.get("return_within_k_share")(run) == 1.0


def test_figures_undefined_without_history() -> None:
    bare = RunData(config="C", run_id="r", nodes={"q1": {"id": "q1"}})
    reg = default_registry()
    for name in ("open_life_median", "closure_hazard", "return_never_share"):
        assert reg.get(name)(bare) is None
    assert pooled_hazard([]) is None
    assert km_median(km_table([(3, False)])) is None


def test_a_closure_back_to_back_with_creation_is_life_zero() -> None:
    rows = km_table([(0, True), (0, False)])
    assert (rows[0].at_risk, rows[0].events, rows[0].censored) == (2, 1, 1)
    assert rows[0].survival == 0.5 and km_median(rows) == 0.0


def _csv(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict]:
    build_run(tmp_path / "runs" / "run-a")
    build_run(tmp_path / "runs" / "run-b", config="C-cur")
    out = tmp_path / "survival.csv"
    assert main(["metrics", str(tmp_path / "runs"), *extra, "--survival-csv", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    return list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))


def test_survival_csv_one_row_per_question(tmp_path: Path, capsys) -> None:
    rows = _csv(tmp_path, capsys)
    assert len(rows) == 14
    a = {r["node"]: r for r in rows if r["run"] == "run-a"}
    assert {n: (int(r["time"]), r["event"] == "1") for n, r in a.items()} == LIVES
    assert a["q4"]["went_dormant"] == "true" and a["q4"]["came_back"] == "true"
    assert (a["q1"]["condition_met"], a["q1"]["return_latency"]) == ("3", "2")
    assert (a["q5"]["return_event"], a["q5"]["returned"]) == ("0", "")
    assert a["q2"]["return_latency"] == ""
    assert {r["config"] for r in rows} == {"C+cur", "C-cur"}


def test_return_within_option_changes_k(tmp_path: Path, capsys) -> None:
    build_run(tmp_path / "run-a")
    out = tmp_path / "m.csv"
    args = ["metrics", str(tmp_path / "run-a"), "--return-within", "1", "--csv", str(out)]
    assert main(args) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    value = {r["metric"]: r["value"] for r in rows}
    # k = 1: all three met conditions can be judged, none came back within 1 session
    assert float(value["return_within_k_share"]) == 0.0
    assert main(["metrics", "--list", "--return-within", "1"]) == 0
    assert "k = 1 sessions" in capsys.readouterr().out


def test_return_within_refuses_zero(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as err:
        main(["metrics", str(tmp_path), "--return-within", "0"])
    assert err.value.code != 0
    assert "must be at least 1" in capsys.readouterr().err


def test_lifelines_reproduces_kaplan_meier(tmp_path: Path, capsys) -> None:
    import lifelines

    rows = [r for r in _csv(tmp_path, capsys) if r["run"] == "run-a"]
    kmf = lifelines.KaplanMeierFitter()
    kmf.fit([int(r["time"]) for r in rows], event_observed=[int(r["event"]) for r in rows])
    ours = km_table([(int(r["time"]), r["event"] == "1") for r in rows])
    theirs = kmf.survival_function_["KM_estimate"]
    for row in ours:
        assert theirs.loc[row.time] == pytest.approx(row.survival)
    assert kmf.median_survival_time_ == km_median(ours)


NEW_METRICS = (
    "open_life_median",
    "closure_hazard",
    "dormant_share",
    "dormant_return_share",
    "return_within_k_share",
    "return_latency_median",
    "return_never_share",
)


def test_new_metrics_listed_and_documented(capsys) -> None:
    assert main(["metrics", "--list"]) == 0
    listed = capsys.readouterr().out
    root = Path(__file__).resolve().parents[1] / "docs"
    csv_doc = (root / "csv.md").read_text(encoding="utf-8")
    protocol = (root / "protocol.md").read_text(encoding="utf-8")
    for name in NEW_METRICS:
        assert f"{name}  [" in listed
        assert f"| {name} |" in csv_doc and f"`{name}`" in protocol


def test_survival_csv_header_is_the_documented_one(tmp_path: Path, capsys) -> None:
    rows = _csv(tmp_path, capsys)
    text = (Path(__file__).resolve().parents[1] / "docs" / "csv.md").read_text(encoding="utf-8")
    section = text.split("## metrics --survival-csv\n", 1)[1].split("\n## ", 1)[0]
    table = section.split("| column | type | meaning |", 1)[1].split("\n\n", 1)[0]
    documented = [line.split(" | ")[0].strip("| ") for line in table.splitlines()[2:]]
    assert list(rows[0]) == documented


def test_survival_by_config_pools_runs_with_a_bootstrap_interval(tmp_path: Path) -> None:
    from curiosity_tui.analysis.survival_config import format_survival, survival_by_config

    for name in ("run-a", "run-b"):
        build_run(tmp_path / "runs" / name)
    build_run(tmp_path / "runs" / "run-c", config="C-cur")
    found = {c.config: c for c in survival_by_config(load_runs([tmp_path / "runs"]), n_boot=200)}
    two = found["C+cur"]
    assert (two.runs, two.questions, two.events) == (2, 14, 8)
    # two copies of the same run: the same curve, so every draw's median is 4
    assert two.median == 4.0 and (two.ci_low, two.ci_high) == (4.0, 4.0)
    assert [r.at_risk for r in two.table] == [14, 12, 10, 8, 2]
    assert found["C-cur"].ci_low is None  # one run: no interval
    text = format_survival(list(found.values()))
    assert "median 4 sessions (95% bootstrap by run: 4 – 4)" in text
    assert "no interval: one run" in text
    assert two.returns == {"closed": 0, "preserved": 2, "answered": 2, "worked": 0, "never": 2}
    assert "met return conditions: 6; returned: 4 (closed 0, preserved 2, answered 2" in text


def test_survival_interval_is_unbounded_when_a_draw_never_halves(tmp_path: Path) -> None:
    from curiosity_tui.analysis.survival_config import _interval

    lo, hi = _interval("X", [[(1, True)], [(3, False)]], 400, 7)
    # draws of (closed, closed) give 1, (open, open) never reach 0.5: both ends occur
    assert lo == 1.0 and hi is None


def test_metrics_survival_flag_prints_the_table(tmp_path: Path, capsys) -> None:
    build_run(tmp_path / "run-a")
    assert main(["metrics", str(tmp_path / "run-a"), "--survival"]) == 0
    out = capsys.readouterr().out
    assert "open life — C+cur: 1 runs, 7 questions, 4 ended; median 4 sessions" in out
    assert "  4        4       1         2  0.4286  0.2500" in out
    assert main(["metrics", str(tmp_path / "run-a"), "--survival", "--json"]) == 2
    assert "--survival prints a text table" in capsys.readouterr().err


def test_vectorised_draw_medians_equal_the_table_median() -> None:
    import random

    import numpy as np

    from curiosity_tui.analysis.survival_config import _draw_medians

    rng = random.Random(3)
    per_run = [
        [(rng.randint(0, 6), rng.random() < 0.5) for _ in range(rng.randint(1, 9))]
        for _ in range(6)
    ]
    draws = np.array([[rng.randrange(6) for _ in range(6)] for _ in range(300)])
    fast = _draw_medians(per_run, draws)
    for row, got in zip(draws, fast, strict=True):
        slow = km_median(km_table([o for i in row for o in per_run[int(i)]]))
        assert got == (np.inf if slow is None else slow)


def test_a_plan_sets_k(run: RunData) -> None:
    from curiosity_tui.analysis.plan import parse_plan
    from curiosity_tui.analysis.verdict import plan_registry

    text = "\n".join(
        [
            'name = "k-plan"',
            'configurations = ["C+cur", "C-cur"]',
            "runs = 2",
            "sessions = 5",
            'seed_question = "Why?"',
            'model = "m"',
            "epsilon = 0.15",
            'metrics = ["return_within_k_share"]',
            "return_within = K",
            "[budgets]",
            "session_completion_tokens = 4000",
            "[rule]",
            'kind = "any_metric_beats_in_all"',
            'treatment = ["C+cur"]',
            'control = ["C-cur"]',
            'pairs = [["C+cur", "C-cur"]]',
            'metrics = ["return_within_k_share"]',
            'text = "C+cur returns sooner"',
        ]
    )
    reg = default_registry()
    one = plan_registry(reg, parse_plan(text.replace("K", "1"), registry=reg))
    assert one.get("return_within_k_share")(run) == 0.0
    assert "k = 1 sessions" in one.get("return_within_k_share").definition
    three = plan_registry(reg, parse_plan(text.replace("K", "3"), registry=reg))
    # k = 3: q5 (followed 1 session) left out; q1 and q4 returned after 2
    assert three.get("return_within_k_share")(run) == 1.0
    assert reg.get("return_within_k_share")(run) == 1.0  # the shared registry is untouched
    with pytest.raises(Exception, match="return_within"):
        parse_plan(text.replace("K", "0"), registry=reg)


def test_the_plan_default_k_is_the_registry_default() -> None:
    from curiosity_tui.analysis.plan import PilotPlan
    from curiosity_tui.analysis.return_latency import DEFAULT_RETURN_K

    assert PilotPlan.model_fields["return_within"].default == DEFAULT_RETURN_K
