"""The continuation contract's rules (S3), one test per rule; each fails if its rule is removed.

Rules are exercised through the transitions the session code calls (``record_check``,
``attempt_closure``) on a real ledger, and once end to end through scripted sessions.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest

from curiosity_tui.contract import downgrades
from curiosity_tui.contract.rules import PILOT_01, PILOT_02, Contract, get_contract
from curiosity_tui.contract.transitions import attempt_closure, record_check
from curiosity_tui.errors import InputError, TransitionError
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.events import ReturnConditionSet
from curiosity_tui.ledger.models import ContractName
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import run_ledger

SEED = "Did the printing press cause the Reformation?"
R1 = "Quantitative estimate of the percentage of pamphlets printed in Wittenberg, 1517-1520."
R2 = "Records of Catholic reformist texts being effectively suppressed."
GRABE = "Bibliographic studies (e.g., by H.J. Grabe) indicate Nuremberg produced 40-50%."


def make_ledger(path: Path, contract: str) -> Ledger:
    """A C-cur ledger whose seed q1 carries a return condition with r1 and r2 (unchecked)."""
    led = Ledger.create(
        path,
        RunMeta(name=path.name, seed=SEED, config="C-cur", contract=cast(ContractName, contract)),
    )
    with led.batch(1, marker="batch_committed", label="setup") as b:
        b.emit(
            ReturnConditionSet(
                required_facts=[
                    {"id": "r1", "text": R1, "status": "unchecked", "checked": None},
                    {"id": "r2", "text": R2, "status": "unchecked", "checked": None},
                ],
                required_actions=[],
                closure_test="the share is established",
            ),
            node="q1",
            actor="model",
        )
    return led


def req(led: Ledger, rid: str, node: str = "q1") -> dict[str, Any]:
    rc = led.raw_nodes()[node]["return_condition"]
    return next(r for r in rc["required_facts"] if r["id"] == rid)


def kinds(led: Ledger, session: int | None = None) -> list[str]:
    return [e.kind for e in led.events() if session is None or e.session == session]


def check(
    led: Ledger, contract: Contract, rid: str, satisfied: bool, session: int = 2, **kw: Any
) -> Any:
    with led.batch(session, marker="batch_committed", label="check") as b:
        return record_check(
            b,
            contract,
            "q1",
            rid,
            satisfied=satisfied,
            evidence_text=kw.pop("evidence_text", GRABE),
            **kw,
        )


def answer(
    led: Ledger, contract: Contract, session: int = 3, text: str = "The press was an accelerant."
) -> Any:
    with led.batch(session, marker="batch_committed", label="answer") as b:
        return attempt_closure(b, contract, "q1", answer=text, delta=-0.0667)


# ----------------------------------------------------------------------------- the contracts


def test_contracts_are_data_with_the_two_fixes_only_in_pilot02() -> None:
    assert get_contract("pilot-01") is PILOT_01 and get_contract("pilot-02") is PILOT_02
    assert (PILOT_01.evidence_required, PILOT_01.closure_bound) == (False, False)
    assert (PILOT_02.evidence_required, PILOT_02.closure_bound) == (True, True)
    # the checker instruction as run (the clause §5 quotes), and its correction
    assert (
        "by facts on file or by knowledge you can state concretely" in PILOT_01.checker_instruction
    )
    assert "knowledge you can state concretely" not in PILOT_02.checker_instruction
    assert "source id" in PILOT_02.checker_instruction
    with pytest.raises(InputError, match="pilot-03"):
        get_contract("pilot-03")


# ----------------------------------------------------------------------------- rule: checks


def test_pilot01_check_sets_status_on_the_claim(tmp_path: Path) -> None:
    with make_ledger(tmp_path / "l", "pilot-01") as led:
        out = check(led, PILOT_01, "r1", True)
        assert out.result == "satisfied" and out.evidence_id is None and not out.verified
        r1 = req(led, "r1")
        assert (r1["status"], r1["checked"]) == ("satisfied", 2)
        # no evidence record at all under pilot-01: prose on its own raised the status
        assert led.raw_nodes()["q1"]["evidence"] == []
        chk = led.raw_nodes()["q1"]["checks"][-1]
        assert chk["claimed"] == chk["result"] == "satisfied" and chk["evidence_text"] == GRABE
        out2 = check(led, PILOT_01, "r2", False)
        assert out2.result == "not_satisfied" and req(led, "r2")["status"] == "not_satisfied"
    assert verify(tmp_path / "l").ok


def test_pilot02_prose_only_is_proposed_and_leaves_status_unchanged(tmp_path: Path) -> None:
    with make_ledger(tmp_path / "l", "pilot-02") as led:
        out = check(led, PILOT_02, "r1", True)
        assert out.result == "unchecked" and not out.verified and out.evidence_id == "e1"
        r1 = req(led, "r1")
        assert (r1["status"], r1["checked"]) == ("unchecked", None)
        [ev] = led.raw_nodes()["q1"]["evidence"]
        assert ev["status"] == "proposed" and ev["match"] is None
        assert ev["passage"] == GRABE and ev["source_id"] is None
        assert "never verified" in ev["reason"]
        assert "evidence_verified" not in kinds(led)
        # the check itself is journalled: what was claimed and what resulted
        [dep] = [e for e in led.events() if e.kind == "dependency_checked"]
        assert dep.data["claimed"] == "satisfied" and dep.data["result"] == "unchecked"


def test_pilot02_unverified_claim_does_not_lift_not_satisfied(tmp_path: Path) -> None:
    with make_ledger(tmp_path / "l", "pilot-02") as led:
        check(led, PILOT_02, "r1", False, session=2, evidence_text="nothing on file")
        assert req(led, "r1")["status"] == "not_satisfied"
        check(led, PILOT_02, "r1", True, session=3)
        assert (req(led, "r1")["status"], req(led, "r1")["checked"]) == ("not_satisfied", 2)


def test_waived_requirement_is_not_changed_by_a_check() -> None:
    for c in (PILOT_01, PILOT_02):
        assert c.check_result("waived", "not_satisfied", False) == "waived"
        assert c.check_result("waived", "satisfied", True) == "waived"


def test_check_of_unknown_requirement_is_refused(tmp_path: Path) -> None:
    with make_ledger(tmp_path / "l", "pilot-02") as led:
        before = led.last_seq
        with pytest.raises(TransitionError, match="r9"):
            check(led, PILOT_02, "r9", True)
        assert led.last_seq == before  # the batch was not applied


# ----------------------------------------------------------------------------- rule: closure


def test_pilot02_answer_over_unmet_requirements_is_blocked(tmp_path: Path) -> None:
    text = "The press was a necessary accelerant. q1 is closed."
    with make_ledger(tmp_path / "l", "pilot-02") as led:
        check(led, PILOT_02, "r2", False, evidence_text="No records are in the store.")
        out = answer(led, PILOT_02, text=text)
        assert not out.closed and out.unmet == ["r1", "r2"]
        q1 = led.raw_nodes()["q1"]
        assert q1["status"] == "open"
        assert "node_closed" not in kinds(led)
        evs = [e for e in led.events() if e.session == 3]
        assert [e.kind for e in evs][:3] == [
            "node_answered",
            "closure_blocked",
            "candidate_preserved",
        ]
        blocked = evs[1]
        assert (
            blocked.data == {"unmet": ["r1", "r2"], "contract": "pilot-02"}
            and blocked.seq == out.seq
        )
        # the answer is kept, as a preserved artifact with its reason
        assert q1["preserved"][-1] == {
            "session": 3,
            "text": text,
            "delta": -0.0667,
            "reason": "closure_blocked",
        }
    assert verify(tmp_path / "l").ok


def test_pilot01_answer_closes_unconditionally_and_records_unmet(tmp_path: Path) -> None:
    with make_ledger(tmp_path / "l", "pilot-01") as led:
        check(led, PILOT_01, "r2", False, evidence_text="No records are in the store.")
        out = answer(led, PILOT_01)
        assert out.closed and out.unmet == ["r1", "r2"]
        assert led.raw_nodes()["q1"]["status"] == "closed"
        closed = [e for e in led.events() if e.kind == "node_closed"]
        assert closed[0].data == {"reason": "ANSWER", "unmet": ["r1", "r2"]}
        assert "closure_blocked" not in kinds(led)
        assert led.raw_nodes()["q1"]["preserved"] == []


def test_pilot02_closes_when_requirements_met_and_refuses_closed_node(tmp_path: Path) -> None:
    with make_ledger(tmp_path / "l", "pilot-02") as led:
        # no return condition at all: nothing is unmet
        with led.batch(2, marker="batch_committed", label="q") as b:
            q2 = b.create_node("A sub-question?", parent="q1", origin="new_question", actor="model")
        with led.batch(2, marker="batch_committed", label="a") as b:
            out = attempt_closure(b, PILOT_02, q2, answer="yes", delta=0.0)
        assert out.closed and led.raw_nodes()[q2]["status"] == "closed"
        with (
            pytest.raises(TransitionError, match="closed"),
            led.batch(2, marker="batch_committed", label="a") as b,
        ):
            attempt_closure(b, PILOT_02, q2, answer="again", delta=0.0)


def test_approved_waive_lets_closure_proceed_at_next_answer(tmp_path: Path) -> None:
    with make_ledger(tmp_path / "l", "pilot-02") as led:
        # r1: a proposal rejected; r2: a weaken approved (still unmet); then waives approved
        d1 = downgrades.propose(
            led,
            "q1",
            "r1",
            "waive",
            grounds="The estimate cannot be sourced in this run.",
            actor="model",
        )
        downgrades.decide(
            led, d1, "reject", grounds="The estimate is central to the question.", actor="human:ana"
        )
        assert not answer(led, PILOT_02).closed
        d2 = downgrades.propose(
            led,
            "q1",
            "r2",
            "weaken",
            new_text="Any record of suppression.",
            grounds="The original bar is too strict for one run.",
            actor="model",
        )
        downgrades.decide(
            led,
            d2,
            "approve",
            grounds="A weaker control still informs the answer.",
            actor="human:ana",
        )
        out = answer(led, PILOT_02, session=4)
        assert not out.closed and out.unmet == ["r1", "r2"]  # weakened is unchecked, still unmet
        d3 = downgrades.propose(
            led,
            "q1",
            "r1",
            "waive",
            grounds="No source for the share exists anywhere.",
            actor="model-curator",
        )
        d4 = downgrades.propose(
            led,
            "q1",
            "r2",
            "waive",
            grounds="The control is secondary to the main question.",
            actor="human:ana",
        )
        for d in (d3, d4):
            downgrades.decide(
                led,
                d,
                "approve",
                grounds="Agreed after reading the checks on file.",
                actor="human:ben",
            )
        assert [req(led, r)["status"] for r in ("r1", "r2")] == ["waived", "waived"]
        out = answer(led, PILOT_02, session=5)
        assert out.closed and out.unmet == []
        assert led.raw_nodes()["q1"]["status"] == "closed"
        assert kinds(led).count("closure_blocked") == 2
    assert verify(tmp_path / "l").ok


# ----------------------------------------------------------------------------- end to end


def _drive(path: Path, srv: ScriptedServer, sessions: int) -> None:
    async def go() -> None:
        client = ModelClient(
            base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
        )
        led = Ledger.open(path, write=True)
        try:
            res = await run_ledger(led, client, sessions=sessions)
        finally:
            led.close()
            await client.aclose()
        assert not res.failed, res.failed

    asyncio.run(go())


def test_scripted_sessions_block_then_close_after_approved_waive(tmp_path: Path) -> None:
    """Session 1 PRESERVEs q1 with a return condition; session 2 ANSWERs over the unmet
    requirement (blocked, answer kept); a human approves the model's waive; session 3's ANSWER
    closes q1."""
    path = tmp_path / "run"
    Ledger.create(path, RunMeta(name="run", seed=SEED, config="C-cur", contract="pilot-02")).close()
    with ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as srv:
        _drive(path, srv, 2)
        with Ledger.open(path) as led:
            rec2 = led.session_record(2)
            assert rec2 is not None and (rec2.focus, rec2.decision) == ("q1", "ANSWER")
            q1 = led.raw_nodes()["q1"]
            assert q1["status"] == "open"
            [blocked] = [e for e in led.events() if e.kind == "closure_blocked"]
            assert blocked.session == 2 and blocked.data["unmet"] == ["r1"]
            assert q1["preserved"][-1]["reason"] == "closure_blocked"
            assert q1["preserved"][-1]["text"] == "[scripted demo reply] Answer to q1 in session 2."
            # the checker ran on r1 with no sources: not satisfied
            assert q1["return_condition"]["required_facts"][0]["status"] == "not_satisfied"
        with Ledger.open(path, write=True) as led:
            pid = downgrades.propose(
                led,
                "q1",
                "r1",
                "waive",
                grounds="The count cannot be had from any source here.",
                actor="model",
            )
            downgrades.decide(
                led,
                pid,
                "approve",
                grounds="Agreed: the count is not needed to answer.",
                actor="human:ana",
            )
        _drive(path, srv, 3)
        # the checker is not asked about a waived requirement
        checker3 = [r for r in srv.requests_of("checker") if r.session == 3]
        assert checker3 == []
    with Ledger.open(path) as led:
        rec3 = led.session_record(3)
        assert rec3 is not None and (rec3.focus, rec3.decision) == ("q1", "ANSWER")
        assert led.raw_nodes()["q1"]["status"] == "closed"
        closed = [e for e in led.events() if e.kind == "node_closed"]
        assert [(e.session, e.node, e.data["unmet"]) for e in closed] == [(3, "q1", [])]
        assert json.loads(json.dumps(rec3.model_dump()))["closure"] == {"closed": True, "unmet": []}
    assert verify(path).ok


class _SelfCertifying(DemoResponder):
    """A deliverable that also claims every required fact satisfied, in its own checks list."""

    def _deliverable(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = super()._deliverable(s, text, body)
        reply["checks"] = [
            {
                "fact_id": "r1",
                "satisfied": True,
                "evidence": "I can state it concretely.",
                "source_id": None,
                "passage": None,
            }
        ]
        return reply


@pytest.mark.parametrize("contract", ["pilot-01", "pilot-02"])
def test_checker_instruction_and_where_checks_come_from(tmp_path: Path, contract: str) -> None:
    """pilot-01: checks come from the deliverable, under the instruction as run; pilot-02:
    separate checker calls under the corrected instruction, and checks in the deliverable are
    ignored (a deliverable cannot certify its own requirements)."""
    path = tmp_path / "run"
    Ledger.create(
        path, RunMeta(name="run", seed=SEED, config="C-cur", contract=cast(ContractName, contract))
    ).close()
    with ScriptedServer(responder=_SelfCertifying(preserve_sessions=(1, 2))) as srv:
        _drive(path, srv, 2)
        checker_calls = [r for r in srv.requests_of("checker") if r.session == 2]
    with Ledger.open(path) as led:
        rec = led.session_record(2)
        assert rec is not None
        checks = [
            (c["session"], c["requirement"], c["claimed"], c["result"])
            for c in led.raw_nodes()["q1"]["checks"]
        ]
        if contract == "pilot-01":
            assert checker_calls == []
            assert (
                "by facts on file or by knowledge you can state concretely"
                in rec.inputs["deliverable"]
            )
            assert checks == [(2, "r1", "satisfied", "satisfied")]
        else:
            assert len(checker_calls) == 1
            prompt = rec.inputs["checker-r1"]
            assert PILOT_02.checker_instruction in prompt
            assert "knowledge you can state concretely" not in prompt + rec.inputs["deliverable"]
            # only the checker's own verdict (not satisfied: no sources) was recorded
            assert checks == [(2, "r1", "not_satisfied", "not_satisfied")]
