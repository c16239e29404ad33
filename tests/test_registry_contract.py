"""Contract-comparison metrics (issue 16, item 2) on hand-computed fixtures, grouping by
configuration × contract, and plans that compare contracts (lock included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.analysis.aggregate import aggregate, group_by_config
from curiosity_tui.analysis.lockchain import lock, verify_chain
from curiosity_tui.analysis.plan import PlanError, parse_plan
from curiosity_tui.analysis.registry import default_registry, get
from curiosity_tui.analysis.rundata import ClosureAttempt, RunCall, RunCounts, RunData, RunSession
from curiosity_tui.analysis.tables import format_tables
from curiosity_tui.analysis.verdict import evaluate_rule

CONTRACT_METRICS = [
    "closed_over_unmet",
    "closures_blocked",
    "closures_allowed_by_downgrade",
    "downgrades_proposed",
    "downgrades_approved",
    "downgrades_rejected",
    "satisfied_verified_per_session",
    "satisfied_asserted_per_session",
    "dependency_checks_per_session",
    "tokens_per_requirement_satisfied",
]


def _check(req: str, result: str, evidence_id: str | None = None) -> dict[str, Any]:
    return {"requirement": req, "result": result, "evidence_id": evidence_id, "session": 1}


def _session(t: int, checks: int, tokens: list[int]) -> RunSession:
    return RunSession(
        session=t,
        counts=RunCounts(dependency_checks=checks),
        calls=[RunCall(kind="x", completion_tokens=n) for n in tokens],
    )


def fixture_run(contract: str = "pilot-02", run_id: str = "r0") -> RunData:
    """Worked by hand (see the comments): 4 committed sessions, 2000 completion tokens,
    6 dependency checks; 1 verified and 3 asserted satisfied marks over 3 distinct
    requirements; downgrades 3 proposed / 1 approved / 1 rejected; closure attempts:
    2 blocked, 1 over an unmet requirement, 1 allowed by a downgrade, 1 clean."""
    q1 = {
        "id": "q1",
        "checks": [
            _check("r1", "satisfied", "e1"),  # e1 verified for r1: a verified mark
            _check("r2", "satisfied", "e2"),  # e2 only proposed: asserted
            _check("r2", "not_satisfied"),  # not a mark
            _check("r1", "satisfied"),  # no evidence record: asserted
        ],
        "evidence": [
            {"id": "e1", "requirement": "r1", "status": "verified"},
            {"id": "e2", "requirement": "r2", "status": "proposed"},
        ],
        "downgrades": [
            {"id": "d1", "requirement": "r1", "status": "approved"},
            {"id": "d2", "requirement": "r2", "status": "rejected"},
        ],
    }
    q2 = {
        "id": "q2",
        # e3 is verified, but for r2: it does not ground a mark of r1 (asserted)
        "checks": [_check("r1", "satisfied", "e3")],
        "evidence": [{"id": "e3", "requirement": "r2", "status": "verified"}],
        "downgrades": [{"id": "d3", "requirement": "r1", "status": "pending"}],
    }
    closures = [
        ClosureAttempt(session=1, node="q1", closed=False, unmet=["r1"]),  # blocked
        ClosureAttempt(session=2, node="q1", closed=True, unmet=["r2"]),  # over unmet
        ClosureAttempt(session=3, node="q2", closed=True, downgraded=["r1"]),  # via downgrade
        ClosureAttempt(session=4, node="q3", closed=True),  # clean
        ClosureAttempt(session=4, node="q4", closed=False, unmet=["r1", "r2"]),  # blocked
    ]
    return RunData.model_validate(
        {
            "config": "C+cur",
            "run_id": run_id,
            "contract": contract,
            "nodes": {"q1": q1, "q2": q2, "q3": {"id": "q3"}, "q4": {"id": "q4"}},
            "sessions": [
                _session(1, 2, [100, 300]),
                _session(2, 1, [200]),
                _session(3, 0, [150, 250]),
                _session(4, 3, [1000]),
                RunSession(session=5, status="failed", counts=RunCounts(dependency_checks=9)),
            ],
            "meta": {"name": run_id},
            "closures": closures,
        }
    )


HAND: dict[str, float] = {
    "closed_over_unmet": 1.0,
    "closures_blocked": 2.0,
    "closures_allowed_by_downgrade": 1.0,
    "downgrades_proposed": 3.0,
    "downgrades_approved": 1.0,
    "downgrades_rejected": 1.0,
    "satisfied_verified_per_session": 1 / 4,
    "satisfied_asserted_per_session": 3 / 4,
    "dependency_checks_per_session": 6 / 4,  # the failed session's 9 are not counted
    "tokens_per_requirement_satisfied": 2000 / 3,  # (q1,r1), (q1,r2), (q2,r1)
}


@pytest.mark.parametrize("name", CONTRACT_METRICS)
def test_contract_metric_on_the_hand_computed_fixture(name: str) -> None:
    assert get(name)(fixture_run()) == pytest.approx(HAND[name])


def test_contract_metrics_are_registered_with_words_and_bookkeeping() -> None:
    reg = default_registry()
    for name in CONTRACT_METRICS:
        m = reg.get(name)
        assert m.group == "contract" and m.bookkeeping and len(m.definition.split()) >= 6
    assert reg.get("closed_over_unmet").higher_is_better is False
    assert reg.get("closures_blocked").higher_is_better is None  # no direction (report §6)


def test_undefined_without_a_closure_log_or_a_satisfied_mark() -> None:
    run = fixture_run().model_copy(update={"closures": None})
    assert get("closed_over_unmet")(run) is None and get("closures_blocked")(run) is None
    assert get("downgrades_proposed")(run) == 3.0  # the snapshot still has them
    bare = RunData(config="C+cur", run_id="x", sessions=[_session(1, 0, [10])])
    assert get("tokens_per_requirement_satisfied")(bare) is None
    assert get("satisfied_verified_per_session")(bare) == 0.0


def test_grouping_by_configuration_and_contract() -> None:
    one = [fixture_run(run_id="a"), fixture_run(run_id="b")]
    assert list(group_by_config(one)) == ["C+cur"]  # one contract: as before
    two = [*one, fixture_run("evidence=asserted,closure=binding", "c")]
    groups = group_by_config(two)
    assert sorted(groups) == ["C+cur@evidence=asserted,closure=binding", "C+cur@pilot-02"]
    assert [r.run_id for r in groups["C+cur@pilot-02"]] == ["a", "b"]
    table = aggregate(two, ["closures_blocked"])
    assert table["C+cur@pilot-02"]["closures_blocked"].n == 2


def test_metrics_text_has_config_x_contract_columns_and_their_difference() -> None:
    runs = [fixture_run(run_id=f"a{i}") for i in range(2)]
    runs += [fixture_run("evidence=verified,closure=binding", f"b{i}") for i in range(2)]
    text = format_tables(runs, default_registry())
    assert "| metric | C+cur@pilot-02 | C+cur@evidence=verified,closure=binding |" in text
    assert (
        "### C+cur@evidence=verified,closure=binding − C+cur@pilot-02 "
        "(contracts compared under one configuration)"
    ) in text
    single = format_tables(runs[:2], default_registry())
    assert "| metric | C+cur |" in single and "C+cur@" not in single


PLAN = """
name = "contracts-demo"
configurations = ["C+cur"]
contracts = ["pilot-02", "evidence=asserted,closure=binding+downgrade"]
runs = 2
sessions = 4
seed_question = "Did the printing press cause the Reformation?"
model = "gpt-4o-mini"
epsilon = 0.15
metrics = ["closed_over_unmet", "satisfied_verified_per_session", "max_depth"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur@closure=binding+downgrade,evidence=verified",
          "C+cur@evidence=asserted,closure=binding+downgrade"]]
metrics = ["satisfied_verified_per_session"]
"""


def test_plan_compares_contracts_and_names_cells() -> None:
    plan = parse_plan(PLAN)
    assert plan.contract_list() == ["pilot-02", "evidence=asserted,closure=binding+downgrade"]
    assert plan.cells() == [
        "C+cur@pilot-02",
        "C+cur@evidence=asserted,closure=binding+downgrade",
    ]
    # the pair's contract is read in canonical form
    assert plan.rule.pairs == [
        ("C+cur@pilot-02", "C+cur@evidence=asserted,closure=binding+downgrade")
    ]


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (('"C+cur@closure', '"C+cur@closure'), None),
        (("contracts = [", 'contract = "pilot-01"\ncontracts = ['), "contracts and contract"),
        (('"pilot-02", "evidence', '"pilot-02", "pilot-02", "evidence'), "twice"),
        (('"pilot-02", "evidence', '"pilot-9", "evidence'), "unknown contract 'pilot-9'"),
        (('[["C+cur@closure', '[["C+cur@evidence=verified,closure=binding@x'), "names cell"),
        (('[["C+cur@closure=binding+downgrade,evidence=verified",', '[["C+cur",'), "names cell"),
    ],
)
def test_plan_contract_axis_is_validated(edit: tuple[str, str], why: str | None) -> None:
    text = PLAN.replace(*edit)
    if why is None:
        parse_plan(text)
        return
    with pytest.raises(PlanError, match=why):
        parse_plan(text, source="p.toml")


def test_prereg_lock_accepts_a_multi_contract_plan(tmp_path: Path) -> None:
    (tmp_path / "plan.toml").write_text(PLAN, encoding="utf-8")
    entry = lock(tmp_path / "plan.toml", "before-runs")
    assert "evidence=asserted,closure=binding+downgrade" in entry.plan_text
    assert verify_chain(tmp_path / "prereg.jsonl").ok


def test_verdict_reads_cells(tmp_path: Path) -> None:
    plan = parse_plan(PLAN)
    good = [fixture_run(run_id=f"v{i}") for i in range(2)]
    weak = []
    for i in range(2):
        r = fixture_run("evidence=asserted,closure=binding+downgrade", f"w{i}")
        r.nodes["q1"].evidence = []
        weak.append(r)
    verdict = evaluate_rule(plan, good + weak)
    assert verdict.outcome == "met", verdict
    [clause] = verdict.by_metric[0].clauses
    assert (clause.treatment, clause.control) == plan.rule.pairs[0]


def test_the_documented_multi_contract_plan_parses_and_locks(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "contracts.md").read_text("utf-8")
    text = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    plan = parse_plan(text, source="docs/contracts.md")
    assert plan.compares_contracts() and len(plan.cells()) == 4
    assert all(a.split("@")[0] == b.split("@")[0] for a, b in plan.rule.pairs)
    (tmp_path / "plan.toml").write_text(text, encoding="utf-8")
    assert lock(tmp_path / "plan.toml", "before-runs").seq == 1
