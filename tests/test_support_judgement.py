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
