"""Metric registry and the shipped metric functions, on hand-computed fixtures."""

from __future__ import annotations

import pytest

from curiosity_tui.analysis.registry import (
    Metric,
    Registry,
    UnknownMetricError,
    default_registry,
    get,
)
from curiosity_tui.analysis.rundata import RunCall, RunCounts, RunData, RunNode, RunSession
from curiosity_tui.errors import InputError
from curiosity_tui.offline.synthetic_rundata import structural_run


def node(nid: str, parent: str | None = None, **kw: object) -> RunNode:
    return RunNode.model_validate({"id": nid, "parent": parent, **kw})


def run_of(*nodes: RunNode, sessions: list[RunSession] | None = None) -> RunData:
    return RunData(
        config="C+cur", run_id="r0", nodes={n.id: n for n in nodes}, sessions=sessions or []
    )


# A hand-drawn final snapshot:
#   q1 (open, worked s2 forced, s3 voluntary; pulse 3 with s4)
#   ├── q2 (closed, facts 1, worked voluntarily s3)
#   │   └── q4 (dormant, never worked)
#   │       └── q6 (archived, worked s5 forced only)
#   ├── q3 (merged, facts 0)
#   q5 (root, closed, no facts, return condition set)
SNAP = run_of(
    node("q1", resurfaced=[2, 3, 4], voluntary=[3], facts=[{"text": "a", "session": 1}]),
    node("q2", "q1", status="closed", resurfaced=[3], voluntary=[3], facts=[{"text": "b"}]),
    node("q3", "q1", status="merged", merged_into="q2"),
    node("q4", "q2", status="dormant"),
    node("q6", "q4", status="archived", resurfaced=[5]),
    node("q5", None, status="closed", return_condition={"closure_test": "x"}),
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("live_nodes", 2.0),  # q1 open, q4 dormant
        ("nodes_worked", 3.0),  # q1, q2, q6
        ("nodes_worked_voluntary", 2.0),  # q1, q2
        ("nodes_worked_forced_only", 1.0),  # q6
        ("closed_nodes", 2.0),  # q2, q5
        ("closed_with_facts", 1.0),  # q2
        ("max_depth", 4.0),  # q1 > q2 > q4 > q6
        ("persistence_pulse3", 1.0),  # q1
        ("facts_total", 2.0),
        ("return_conditions_set", 1.0),
    ],
)
def test_structural_metrics_hand_computed(name: str, expected: float) -> None:
    assert get(name)(SNAP) == expected


def test_depth_root_counts_one_and_empty_run_is_zero() -> None:
    assert get("max_depth")(run_of(node("q1"))) == 1.0
    assert get("max_depth")(run_of()) == 0.0


def test_depth_survives_missing_parent_and_cycles() -> None:
    # parent outside the snapshot: the chain stops there
    assert get("max_depth")(run_of(node("q2", "q9"), node("q3", "q2"))) == 2.0
    # a cycle (corrupt data) must not hang
    assert get("max_depth")(run_of(node("a", "b"), node("b", "a"))) in (1.0, 2.0)


def _session(n: int, actions: int, questions: int, *, forced: bool, checks: int = 0) -> RunSession:
    return RunSession(
        session=n,
        focus="q1" if forced else None,
        counts=RunCounts(voluntary_actions=actions, dependency_checks=checks),
        questions=[f"q{n}.{i}" for i in range(questions)],
    )


def test_voluntary_progression_report_worked_numbers() -> None:
    # report §4 / issue 7: two actions and three new questions give 0.40
    r = run_of(sessions=[_session(2, 2, 3, forced=True, checks=2)])
    assert get("voluntary_progression")(r) == pytest.approx(0.40)
    # the same actions and one question give 0.67
    r = run_of(sessions=[_session(2, 2, 1, forced=True, checks=2)])
    assert get("voluntary_progression")(r) == pytest.approx(2 / 3)
    assert round(get("voluntary_progression")(r) or 0, 2) == 0.67


def test_voluntary_progression_sessions_2_on_mean_within_run_and_raw_variant() -> None:
    r = run_of(
        sessions=[
            _session(1, 9, 0, forced=True),  # session 1 excluded
            _session(2, 2, 3, forced=True, checks=1),  # 0.4 ; raw (2+1+1)/(4+3) = 4/7
            _session(3, 1, 1, forced=False),  # 0.5 ; raw 0.5
            _session(4, 0, 0, forced=False),  # 0/0: undefined, skipped in both
        ]
    )
    assert get("voluntary_progression")(r) == pytest.approx((0.4 + 0.5) / 2)
    assert get("voluntary_progression_raw")(r) == pytest.approx((4 / 7 + 0.5) / 2)
    assert get("voluntary_progression")(run_of()) is None


def test_preserve_share_tokens_and_facts_per_1k() -> None:
    calls = [
        RunCall(kind="candidate", internal=True, completion_tokens=500),
        RunCall(kind="final", internal=False, completion_tokens=500, finish_reason="length"),
        RunCall(kind="curator", internal=True, completion_tokens=9999),  # outside the budget
    ]
    sessions = [
        RunSession(session=1, decision="PRESERVE", calls=calls),
        RunSession(session=2, decision="ANSWER", calls=calls),
        RunSession(session=3, decision="PRESERVE", calls=calls, status="failed"),
    ]
    r = run_of(node("q1", facts=[{"text": "a"}, {"text": "b"}]), sessions=sessions)
    assert get("preserve_share")(r) == 0.5
    assert get("facts_per_1k_all")(r) == pytest.approx(2 * 1000 / 2000)
    assert get("facts_per_1k_final")(r) == pytest.approx(2 * 1000 / 1000)
    assert get("tokens_internal_per_session")(r) == 500.0
    assert get("tokens_final_per_session")(r) == 500.0
    assert get("final_calls_length")(r) == 2.0
    assert get("preserve_share")(run_of()) is None
    assert get("facts_per_1k_all")(run_of()) is None


def test_unknown_metric_is_a_clear_input_error_with_suggestion() -> None:
    with pytest.raises(UnknownMetricError, match="unknown metric 'max_dept'.*max_depth"):
        get("max_dept")
    assert issubclass(UnknownMetricError, InputError)


def test_registry_register_rules() -> None:
    reg = Registry()

    @reg.register("a_metric", definition="d", unit="u", denominator="per run")
    def _a(run: RunData) -> float:
        return 1

    assert reg.names() == ["a_metric"]
    assert reg.get("a_metric")(run_of()) == 1.0
    with pytest.raises(ValueError, match="already registered"):
        reg.register("a_metric", definition="d", unit="u", denominator="x")(_a)
    with pytest.raises(ValueError, match="snake_case"):
        Metric(name="Not Snake", definition="", unit="", denominator="", fn=_a)
    copy = reg.copy()
    copy.remove("a_metric")
    assert "a_metric" in reg and "a_metric" not in copy


def test_report_names_and_flags() -> None:
    reg = default_registry()
    for name in ("nodes_worked", "max_depth", "live_nodes", "closed_nodes"):
        m = reg.get(name)
        assert m.structural and not m.bookkeeping and m.higher_is_better is True
    assert reg.get("return_conditions_set").bookkeeping
    info = reg.get("closed_with_facts").info()
    assert "not 'grounded'" in info.definition


def test_structural_run_builder_hits_its_figures() -> None:
    r = structural_run("C+cur", "r0", depth=3, worked=5, voluntary=3, closed=2, closed_with_facts=1)
    assert get("max_depth")(r) == 3
    assert get("nodes_worked")(r) == 5
    assert get("nodes_worked_voluntary")(r) == 3
    assert get("nodes_worked_forced_only")(r) == 2
    assert get("closed_nodes")(r) == 2
    assert get("closed_with_facts")(r) == 1
    assert get("live_nodes")(r) == 3
    r1 = structural_run("C-cur", "r1", depth=1, worked=6)
    assert get("max_depth")(r1) == 1 and get("nodes_worked")(r1) == 6


def test_bookkeeping_counts_and_internal_truncation() -> None:
    calls = [
        RunCall(kind="candidate", internal=True, finish_reason="length"),
        RunCall(kind="candidate", internal=True, finish_reason="stop"),
        RunCall(kind="curator", internal=False, finish_reason="length"),  # not a session call
    ]
    r = run_of(
        sessions=[
            RunSession(session=1, counts=RunCounts(dependency_checks=2), calls=calls),
            RunSession(session=2, counts=RunCounts(dependency_checks=1), calls=calls),
            RunSession(session=3, counts=RunCounts(dependency_checks=5), status="failed"),
        ]
    )
    assert get("dependency_checks_total")(r) == 3.0  # failed sessions do not count
    assert get("internal_calls_length")(r) == 2.0
    assert get("final_calls_length")(r) == 0.0


def test_the_numerator_only_variant_is_computed_nowhere() -> None:
    # 2 voluntary actions, forced focus, 2 checks, 3 questions: the report's definition
    # gives 2/5 = 0.40, raw gives 5/8; excluding forced work from the numerator only
    # would give 2/8 = 0.25 — a variant recorded in §4 and used nowhere.
    r = run_of(sessions=[_session(2, 2, 3, forced=True, checks=2)])
    values = {m.name: m(r) for m in default_registry()}
    assert values["voluntary_progression"] == pytest.approx(0.40)
    assert values["voluntary_progression_raw"] == pytest.approx(5 / 8)
    assert all(v is None or v != pytest.approx(0.25) for v in values.values())
