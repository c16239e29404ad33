"""Support judgements (issue 26.3, decision 520): a verified passage is judged — by a human or
by the model judge the plan names, never pooled — for whether it establishes its requirement;
under ``evidence = supported`` only an admitted ``yes`` satisfies."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.contract import support
from curiosity_tui.contract.audit import audit
from curiosity_tui.contract.rules import get_contract
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger import Ledger, verify
from tests.test_evidence import VERBATIM, _check, _ledger, _r1

SUPPORTED = "evidence=supported,closure=binding+downgrade"
GROUNDS_NO = "The passage counts pamphlets by city but gives no shares at all."
GROUNDS_YES = "The passage states the cities' output directly, which is the share asked."


def test_a_verified_check_alone_never_satisfies_under_supported(tmp_path: Path) -> None:
    contract = get_contract(SUPPORTED)
    led, sid = _ledger(tmp_path, contract.name)
    with led:
        out = _check(led, contract, source_id=sid, passage=VERBATIM)
        assert out.verified and out.result == "unchecked"
        assert _r1(led)["status"] == "unchecked"
        ev = support.judge(led, "q1", "e1", "no", grounds=GROUNDS_NO, by="human:ann")
        assert (ev.admitted, ev.result) == (True, "unchecked")
        assert _r1(led)["status"] == "unchecked"
        with pytest.raises(TransitionError, match="already judged"):
            support.judge(led, "q1", "e1", "yes", grounds=GROUNDS_YES, by="human:ann")
        ev = support.judge(led, "q1", "e1", "yes", grounds=GROUNDS_YES, by="human:bob")
        assert (ev.admitted, ev.result) == (True, "satisfied")
        assert _r1(led)["status"] == "satisfied"
        [rec] = led.raw_nodes()["q1"]["evidence"]
        assert [(j["by"], j["verdict"]) for j in rec["support"]] == [
            ("human:ann", "no"),
            ("human:bob", "yes"),
        ]
    assert verify(led.path).ok
    with Ledger.open(led.path) as again:  # replayed from the journal: the same state
        assert again.raw_nodes()["q1"]["return_condition"]["required_facts"][0]["status"] == (
            "satisfied"
        )


def test_partly_does_not_satisfy_and_an_unnamed_model_is_not_admitted(tmp_path: Path) -> None:
    contract = get_contract(SUPPORTED)
    led, sid = _ledger(tmp_path, contract.name)
    with led:
        _check(led, contract, source_id=sid, passage=VERBATIM)
        ev = support.judge(led, "q1", "e1", "partly", grounds=GROUNDS_NO, by="human:ann")
        assert ev.result == "unchecked"
        ev = support.judge(led, "q1", "e1", "yes", grounds="it says so", by="model:gemma")
        assert (ev.admitted, ev.result) == (False, "unchecked")  # the plan names no model judge


def test_under_verified_a_judgement_is_recorded_and_changes_nothing(tmp_path: Path) -> None:
    contract = get_contract("pilot-02")
    led, sid = _ledger(tmp_path, contract.name)
    with led:
        assert _check(led, contract, source_id=sid, passage=VERBATIM).result == "satisfied"
        ev = support.judge(led, "q1", "e1", "no", grounds=GROUNDS_NO, by="human:ann")
        assert (ev.admitted, ev.result) == (False, "satisfied")
        kinds = audit(led).counts()
    assert kinds == {"verified_not_supporting": 1}


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        ({"by": "ann"}, "human:<name> or model:<model name>"),
        ({"by": "human:model"}, "human:<name> or model:<model name>"),
        ({"verdict": "maybe"}, "yes, no or partly"),
        ({"grounds": "fine"}, "at least a sentence"),
        ({"evidence_id": "e9"}, "no evidence record"),
    ],
)
def test_bad_judgements_are_refused_naming_the_problem(
    tmp_path: Path, kw: dict[str, str], why: str
) -> None:
    contract = get_contract(SUPPORTED)
    led, sid = _ledger(tmp_path, contract.name)
    args = {"evidence_id": "e1", "verdict": "yes", "grounds": GROUNDS_YES, "by": "human:ann"}
    args.update(kw)
    with led:
        _check(led, contract, source_id=sid, passage=VERBATIM)
        _check(led, contract, source_id=sid, passage="a passage the source never had")
        with pytest.raises(TransitionError, match=why):
            support.judge(led, "q1", args.pop("evidence_id"), args.pop("verdict"), **args)
        with pytest.raises(TransitionError, match="only a verified passage"):
            support.judge(led, "q1", "e2", "yes", grounds=GROUNDS_YES, by="human:ann")


# ----------------------------------------------------------------------------- scripted judge


def _prompt(requirement: str, passage: str) -> dict[str, object]:
    from curiosity_tui.protocol.prompts import support_judge_messages

    return {"messages": support_judge_messages("Did print matter?", requirement, passage)}


@pytest.mark.parametrize(
    ("passage", "verdict"),
    [
        ("A count of literacy rates among urban artisans survives.", "yes"),
        ("Literacy was rising in the towns, by all accounts.", "partly"),
        ("Nuremberg's presses out-printed Wittenberg's in 1520.", "no"),
    ],
)
def test_the_scripted_judges_answer_every_verdict_deterministically(
    passage: str, verdict: str
) -> None:
    from curiosity_tui.offline.demo import DemoResponder
    from curiosity_tui.offline.research import ResearchResponder

    body = _prompt("a count of literacy rates among urban artisans", passage)
    demo = DemoResponder(label="")
    assert demo("support-judge", 2, body)["verdict"] == verdict
    assert demo("support-judge", 2, body) == demo("support-judge", 2, body)
    research = ResearchResponder()
    first = research("support-judge", 2, body, run="r0")
    assert first["verdict"] in ("yes", "no", "partly") and first["grounds"]
    assert ResearchResponder()("support-judge", 2, body, run="r0") == first  # per seed


def _plan(tmp_path: Path, contract: str, judge: str) -> Path:
    text = f'''name = "sup"
model = "scripted-demo"
runs = 1
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
epsilon = 0.15
contract = "{contract}"
configurations = ["C-cur", "B"]
metrics = ["max_depth"]
support_judge = "{judge}"
[budgets]
session_completion_tokens = 4000
[rule]
kind = "any_metric_beats_in_all"
pairs = [["C-cur", "B"]]
metrics = ["max_depth"]
'''
    path = tmp_path / "sup.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_plan_names_the_model_judge_and_its_runs_carry_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.cli import main

    plan = _plan(tmp_path, SUPPORTED, "model:scripted-demo")
    out = tmp_path / "runs"
    argv = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--unregistered"]
    assert main([*argv, "--workers", "1"]) == 0, capsys.readouterr().err
    [ledger] = [p for p in out.rglob("C-cur-r0") if (p / "journal.jsonl").is_file()]
    with Ledger.open(ledger) as led:
        assert led.meta.options["support_judge"] == "model:scripted-demo"
        assert led.meta.contract == SUPPORTED


def test_a_plan_naming_a_judge_nothing_reads_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.cli import main

    plan = _plan(tmp_path, "pilot-02", "model:scripted-demo")
    out = tmp_path / "runs"
    assert main(["pilot", "run", str(plan), "--out", str(out), "--scripted", "--unregistered"]) != 0
    err = capsys.readouterr().err
    assert "no contract of the plan is evidence=supported" in err
    assert len(err.strip().splitlines()) == 1


def test_example_ledgers_audit_and_replay_as_before() -> None:
    """No judgement, no supported contract: no support finding, no ``support`` key on any
    evidence record (their state hashes and snapshots are as they were)."""
    examples = Path(__file__).resolve().parent.parent / "ledgers"
    for path in sorted(p for p in examples.iterdir() if (p / "journal.jsonl").is_file()):
        with Ledger.open(path) as led:
            kinds = {f.kind for f in audit(led).findings}
            records = [e for n in led.raw_nodes().values() for e in n["evidence"]]
        assert not kinds & {"verified_not_supporting", "verified_support_unjudged"}, path.name
        assert all("support" not in e for e in records), path.name
        assert verify(path).ok, path.name
