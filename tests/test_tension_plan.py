"""Issue 26 items 4, 5 as plan options: the plan keys are checked on load, a plan's arms carry
their tension measure into their runs, and ``sweep`` and ``metrics`` work for each setting
(Δ values of different measures are never pooled; service sessions leave the sweep)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.analysis.plan import PilotPlan
from curiosity_tui.analysis.rundata import RunData, RunSession, load_runs
from curiosity_tui.analysis.sweep import sweep_runs
from curiosity_tui.cli import main
from curiosity_tui.errors import InputError
from curiosity_tui.ledger import Ledger, iter_ledgers

PLAN = """\
name = "tension-side-by-side"
configurations = ["C-asrun", "C-pre", "C-four"]
runs = 1
sessions = 3
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "preserve_share"]
contract = "pilot-01"
service_sessions = [3]
tension_weights = { D = 0.25, H = 0.25, F = 0.25, U = 0.25 }

[budgets]
session_completion_tokens = 4000

[arms.C-asrun]
config = "C-cur"

[arms.C-pre]
config = "C-cur"
tension = "pre-amendment"

[arms.C-four]
config = "C-cur"
tension = "four-component"

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C-pre", "C-asrun"]]
metrics = ["max_depth"]
"""


def _plan(text: str) -> PilotPlan:
    import tomllib

    return PilotPlan.model_validate(tomllib.loads(text))


def test_plan_states_the_setting_per_arm() -> None:
    plan = _plan(PLAN)
    assert plan.tension_for("C-asrun").measure == "as-run"
    assert plan.tension_for("C-pre").measure == "pre-amendment"
    four = plan.tension_for("C-four")
    assert four.measure == "four-component" and four.weights is not None
    assert plan.tension_for("C-pre").weights is None  # weights only where they apply
    assert all(plan.tension_for(a).service_sessions == (3,) for a in ("C-asrun", "C-pre"))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (('tension = "four-component"', 'tension = "as-run"'), "no run uses"),
        (("tension_weights = { D = 0.25, H = 0.25, F = 0.25, U = 0.25 }\n", ""), "weights stated"),
        (
            ("tension_weights = { D = 0.25, H = 0.25", "tension_weights = { D = 0.5, H = 0.25"),
            "sum",
        ),
        (("service_sessions = [3]", "service_sessions = [4]"), "plan runs 1-3"),
        (("service_sessions = [3]", "service_sessions = [2, 2]"), "twice"),
    ],
)
def test_plan_refuses_an_inconsistent_setting(change: tuple[str, str], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        _plan(PLAN.replace(*change))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tension-plan")
    plan = root / "plan.toml"
    plan.write_text(PLAN, encoding="utf-8")
    out = root / "runs"
    args = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--unregistered"]
    assert main([*args, "--workers", "1"]) == 0
    return out


def test_each_arm_runs_under_its_measure(runs: Path) -> None:
    seen = {}
    for path in iter_ledgers(runs):
        with Ledger.open(path) as led:
            options = led.meta.options
            records = led.session_records()
        arm = options["arm"]
        seen[arm] = options["tension"]["measure"]
        assert all(r.decided is not None for r in records)
        assert [r.decided.kind for r in records if r.decided] == ["research", "research", "service"]
        assert records[2].decision == "ANSWER"
        measures = {r.tension.measure for r in records if r.tension}
        assert measures == {options["tension"]["measure"]}
    assert seen == {"C-asrun": "as-run", "C-pre": "pre-amendment", "C-four": "four-component"}


def test_sweep_and_metrics_work_for_each_setting(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sweep", str(runs), "--json"]) == 0
    tables = json.loads(capsys.readouterr().out)
    labels = sorted(t["label"] for t in tables)
    assert labels == ["C-asrun", "C-four", "C-pre"]
    assert all(t["n"] == 2 for t in tables)  # session 3 is a service session: not swept
    assert main(["metrics", str(runs), "--json"]) == 0
    assert "preserve_share" in capsys.readouterr().out


def test_sweep_never_pools_two_measures() -> None:
    def run(name: str, measure: str | None, delta: float) -> RunData:
        meta = {"options": {"tension": {"measure": measure}}} if measure else {}
        return RunData(
            config="C-cur",
            run_id=name,
            meta=meta,
            sessions=[RunSession(session=1, decision="ANSWER", delta=delta)],
        )

    out = sweep_runs([run("a", None, -0.2), run("b", "pre-amendment", 0.1)])
    assert sorted(r.label for r in out) == [
        "C-cur — tension as-run",
        "C-cur — tension pre-amendment",
    ]
    assert [r.n for r in out] == [1, 1]


def _terms(deltas: list[float]) -> dict[str, object]:
    """A session's tension terms with a Δ per candidate, as the journal stores them."""
    n = len(deltas)
    return {
        **{"D": 0.0, "F_before": 1, "U_before": 1, "F_after": 1, "U_after": 1},
        "candidates": [f"c{i}" for i in range(n)],
        "similarities": [[1.0 if i == j else 0.5 for j in range(n)] for i in range(n)],
        "embedder": "tfidf",
        "per_candidate": [
            {"index": i, "F_after": 1, "U_after": 1, "tension_after": 0.3, "delta": d}
            for i, d in enumerate(deltas)
        ],
    }


def test_per_candidate_sweep_reads_the_delta_preserve_read(tmp_path: Path) -> None:
    deltas = [-0.4, -0.05, -0.3]
    basis = {"measure": "as-run", "by_delta": "ANSWER", "candidate": 1, "delta": -0.05}
    s = RunSession.model_validate(
        {
            "session": 1,
            "config": "C-cur",
            "decision": "ANSWER",
            "delta": -0.4,
            "tension": _terms(deltas),
            "decided": {**basis, "kind": "research"},
        }
    )
    assert s.decision_delta() == -0.05
    service = RunSession.model_validate({**s.model_dump(), "decided": {**basis, "kind": "service"}})
    run = RunData(config="C-cur", run_id="r", sessions=[s, service])
    assert run.deltas() == [-0.05]
    # a run file's malformed entries are refused in one line naming the file (decision 501:
    # run files are read as strictly as the journal), never a traceback
    bad = run.model_dump(mode="json")
    bad["sessions"][0]["tension"]["per_candidate"] = [{"x": 1}, "y", {"delta": "z"}]
    path = tmp_path / "odd.run.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(InputError, match=r"odd\.run\.json: not a run file: sessions"):
        load_runs([path])


def test_tension_metrics_on_the_plan_runs(runs: Path) -> None:
    from curiosity_tui.analysis.tension_metrics import (
        delta_mean,
        fallback_share,
        service_override_share,
    )

    for path in iter_ledgers(runs):
        with Ledger.open(path) as led:
            run = RunData.from_ledger(led)
            records = led.session_records()
        deltas = [r.delta for r in records if r.delta is not None]
        assert delta_mean(run) == pytest.approx(sum(deltas) / len(deltas))
        assert fallback_share(run) is None  # no Δ per candidate in this plan
        said = records[2].decided.by_delta if records[2].decided else None
        assert service_override_share(run) == (1.0 if said == "PRESERVE" else 0.0)


def test_fallback_and_override_shares_by_hand() -> None:
    from curiosity_tui.analysis.tension_metrics import fallback_share, service_override_share

    def s(t: int, kind: str, by: str, fallback: bool) -> RunSession:
        return RunSession.model_validate(
            {
                "session": t,
                "decision": "ANSWER" if kind == "service" else by,
                "delta": -0.3,
                "tension": _terms([-0.3]),
                "decided": {
                    **{"measure": "as-run", "candidate": 0, "delta": -0.3},
                    **{"kind": kind, "by_delta": by, "fallback": fallback},
                },
            }
        )

    run = RunData(
        config="C-cur",
        run_id="r",
        sessions=[
            s(1, "research", "PRESERVE", True),
            s(2, "research", "ANSWER", False),
            s(3, "research", "PRESERVE", True),
            s(4, "service", "PRESERVE", True),
            s(5, "service", "ANSWER", False),
        ],
    )
    assert fallback_share(run) == pytest.approx(2 / 3)  # service sessions are not counted
    assert service_override_share(run) == pytest.approx(1 / 2)
    assert fallback_share(RunData(config="C-cur", run_id="x")) is None


def test_ledger_new_records_the_setting_and_refuses_bad_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = ["--seed", "Did the printing press cause the Reformation?", "--config", "C-cur"]
    args = ["--tension", "four-component", "--per-candidate", "--service-sessions", "2,4-5"]
    assert main(["ledger", "new", str(tmp_path / "a"), *seed, *args]) == 0
    with Ledger.open(tmp_path / "a") as led:
        recorded = led.meta.options["tension"]
    assert recorded["measure"] == "four-component" and recorded["service_sessions"] == [2, 4, 5]
    assert recorded["weights"] == {"D": 0.25, "H": 0.25, "F": 0.25, "U": 0.25}
    assert main(["ledger", "new", str(tmp_path / "b"), *seed]) == 0
    with Ledger.open(tmp_path / "b") as led:
        assert "tension" not in led.meta.options  # the default is not recorded
    capsys.readouterr()
    for bad, words in (
        (["--tension-weights", "D=1,H=0,F=0,U=0"], "need --tension four-component"),
        (["--tension", "four-component", "--tension-weights", "D=0.9,H=0.9"], "sum to 1"),
        (["--service-sessions", "0"], "--service-sessions"),
    ):
        assert main(["ledger", "new", str(tmp_path / "c"), *seed, *bad]) == 2
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1 and "Traceback" not in err
        assert not (tmp_path / "c").exists()  # nothing created


def test_the_report_states_each_runs_setting(runs: Path) -> None:
    from curiosity_tui.analysis.run_conditions import conditions_section

    loaded = []
    for path in iter_ledgers(runs):
        with Ledger.open(path) as led:
            loaded.append(RunData.from_ledger(led))
    text = "\n".join(conditions_section(loaded))
    assert "tension: pre-amendment; service sessions 3" in text
    assert (
        "tension: four-component; weights D 0.25, H 0.25, F 0.25, U 0.25; service sessions 3"
        in text
    )
    assert "tension: as-run; service sessions 3" in text
