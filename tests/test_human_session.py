"""The domain side of a human session (issue 15, item 2): the person receives exactly a model's
input; their deliverable passes the model's rules and is committed as one batch through the
model's apply path, every deliverable event by ``human:<name>``; no Δ is invented."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from human_fixtures import PASSAGE, build_after_model_session, copy_ledger

from curiosity_tui.errors import InputError
from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.ledger.models import Mind
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.protocol.human_drafts import HumanDraft, draft_path, load_draft, save_draft
from curiosity_tui.protocol.human_session import (
    HumanDeliverable,
    commit_human_session,
    human_session_input,
    passage_problem,
)
from curiosity_tui.protocol.schemas import (
    CheckResult,
    DeliverableResponse,
    JudgeBeforeResponse,
    NewQuestion,
    OpenLayer,
    ReturnConditionProposal,
)
from curiosity_tui.runs.runner import run_ledger


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_after_model_session(tmp_path_factory.mktemp("human") / "relay")


@pytest.fixture
def path(base: Path, tmp_path: Path) -> Path:
    return copy_ledger(base, tmp_path / "relay")


def preserve(
    inp_focus: str, rid: str, source: str, *, parent: str | None = None
) -> HumanDeliverable:
    return HumanDeliverable(
        decision="PRESERVE",
        reason="the count is on file but one city is not a comparison",
        deliverable=DeliverableResponse(
            answer=None,
            actions=[],
            new_questions=[NewQuestion(text="Who kept the guild registers?", parent=parent)],
            open_layer=OpenLayer(
                node_status="literacy is counted for one city only",
                living_questions=[NewQuestion(text="Was Augsburg different?", parent=inp_focus)],
                return_condition=ReturnConditionProposal(
                    required_facts=["a second city's count"],
                    required_actions=[],
                    closure_test="two cities compared",
                ),
            ),
            facts=[],
            checks=[
                CheckResult(
                    fact_id=rid, satisfied=True, evidence=PASSAGE, source_id=source, passage=PASSAGE
                )
            ],
            downgrade_proposals=[],
        ),
    )


def test_the_person_receives_the_bytes_and_focus_a_model_would(path: Path, tmp_path: Path) -> None:
    with Ledger.open(path) as led:
        inp = human_session_input(led, 2)
    model_copy = copy_ledger(path, tmp_path / "model")
    srv = ScriptedServer(responder=DemoResponder()).start()
    client = ModelClient(base_url=srv.base_url, api_key="k", model="scripted", retry_backoff_s=0.01)

    async def go() -> None:
        with Ledger.open(model_copy, write=True) as led:
            await run_ledger(led, client, sessions=2)
        await client.aclose()

    try:
        asyncio.run(go())
    finally:
        srv.stop()
    with Ledger.open(model_copy) as led:
        rec = led.session_records()[1]
    assert rec.inputs["rendering"] == inp.rendering  # the same bytes
    assert rec.focus == inp.focus
    assert "[scripted demo reply]" in inp.rendering  # model text, carried as it is
    [req] = inp.requirements
    assert req.passages and req.passages[0][1] == PASSAGE  # the checker's retrieval


def test_the_judge_is_shown_only_when_a_model_ran_it(path: Path) -> None:
    with Ledger.open(path) as led:
        assert human_session_input(led, 2).judge is None
        jb = JudgeBeforeResponse(framings=["causal"], dependencies=["literacy"])
        inp = human_session_input(led, 2, judge=jb, judge_by="model scripted")
    assert inp.judge is not None
    assert (inp.judge.by, inp.judge.framings, inp.judge.dependencies) == (
        "model scripted",
        ["causal"],
        ["literacy"],
    )


def test_preserve_commits_one_batch_by_the_person_and_verifies(path: Path) -> None:
    with Ledger.open(path, write=True) as led:
        inp = human_session_input(led, 2)
        source = led.sources()[0].id
        before = len(list(led.events()))
        rec = commit_human_session(led, 2, "alice", preserve(inp.focus, "r1", source))
        events = list(led.events())[before:]
        node = led.raw_nodes()[inp.focus]
        stored = led.session_records()[-1]
    assert verify(path).ok
    assert stored.mind == Mind(kind="human", name="alice") and rec.mind == stored.mind
    assert stored.decision == "PRESERVE" and stored.delta is None and stored.tension is None
    assert "the count is on file" in stored.outputs["human"]
    assert stored.inputs["rendering"] == inp.rendering
    # one batch: session_started first, session_committed last, nothing else in between
    assert events[0].kind == "session_started" and events[-1].kind == "session_committed"
    assert {e.session for e in events} == {2}
    by_person = {e.kind for e in events if e.actor == "human:alice"}
    assert {
        "dependency_checked",
        "evidence_added",
        "node_created",
        "return_condition_revised",
    } <= by_person
    assert not any(e.actor == "model" for e in events)
    # the passage came from the source through retrieval: verified, requirement satisfied
    # (the revised return condition then retires r1: it is not among the new required facts)
    assert node["checks"][-1]["requirement"] == "r1"
    assert node["checks"][-1]["result"] == "satisfied"
    assert node["checks"][-1]["actor"] == "human:alice"
    assert node["evidence"][-1]["status"] == "verified"
    assert not any(p["session"] == 2 for p in node["preserved"])  # nothing withheld, no Δ
    assert stored.counts.new_questions == 1 and stored.counts.open_layer == 1


def test_a_model_would_not_verify_composed_prose_nor_does_a_person(path: Path) -> None:
    with Ledger.open(path, write=True) as led:
        inp = human_session_input(led, 2)
        source = led.sources()[0].id
        assert passage_problem(led, source, PASSAGE) == ""
        prose = "artisans in Wittenberg were mostly literate, I believe"
        assert "does not occur" in passage_problem(led, source, prose)
        hd = preserve(inp.focus, "r1", source)
        hd.deliverable.checks[0].passage = prose
        commit_human_session(led, 2, "alice", hd)
        node = led.raw_nodes()[inp.focus]
    assert node["checks"][-1]["result"] != "satisfied"
    assert node["evidence"][-1]["status"] == "proposed"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda hd: setattr(hd, "reason", " "), "state a reason"),
        (lambda hd: setattr(hd, "decision", "ANSWER"), "ANSWER needs the answer"),
        (
            lambda hd: setattr(hd.deliverable.new_questions[0], "parent", "q99"),
            "'q99' is not one of",
        ),
        (lambda hd: hd.deliverable.open_layer.living_questions.clear(), "at least 1"),
        (lambda hd: setattr(hd.deliverable.checks[0], "fact_id", "r7"), "'r7' is not one of"),
    ],
)
def test_the_models_rules_refuse_a_bad_deliverable_and_nothing_is_written(
    path: Path, change: object, said: str
) -> None:
    with Ledger.open(path, write=True) as led:
        inp = human_session_input(led, 2)
        hd = preserve(inp.focus, "r1", led.sources()[0].id)
        change(hd)  # type: ignore[operator]
        before = len(list(led.events()))
        with pytest.raises(InputError, match=said) as err:
            commit_human_session(led, 2, "alice", hd)
        assert "\n" not in str(err.value)
        assert len(list(led.events())) == before
        with pytest.raises(InputError, match="not the next session"):
            commit_human_session(led, 3, "alice", preserve(inp.focus, "r1", led.sources()[0].id))


def test_answer_is_the_persons_and_closure_follows_the_contract(path: Path) -> None:
    with Ledger.open(path, write=True) as led:
        inp = human_session_input(led, 2)
        hd = preserve(inp.focus, "r1", led.sources()[0].id)
        hd.decision = "ANSWER"
        hd.deliverable.answer = "Partly: the press spread what preachers said."
        hd.deliverable.checks.clear()  # r1 stays unchecked: pilot-02 blocks the closure
        rec = commit_human_session(led, 2, "bob", hd)
        node = led.raw_nodes()[inp.focus]
        events = [e for e in led.events() if e.session == 2]
    assert rec.closure is not None and rec.closure.closed is False and rec.closure.unmet
    answered = next(e for e in events if e.kind == "node_answered")
    assert answered.actor == "human:bob" and answered.data["delta"] is None
    assert node["preserved"][-1]["reason"] == "closure_blocked"
    assert verify(path).ok


def test_a_draft_round_trips_and_an_unreadable_one_is_moved_aside(tmp_path: Path) -> None:
    d = HumanDraft(session=2, person="alice", started="t0", fields={"reason": "why [b]not[/b]"})
    save_draft(tmp_path, d)
    assert load_draft(tmp_path, 2, "alice") == (d, "")
    assert load_draft(tmp_path, 2, "bob") == (None, "")
    draft_path(tmp_path, 2, "alice").write_text("{not json", encoding="utf-8")
    got, line = load_draft(tmp_path, 2, "alice")
    assert got is None and "unreadable draft moved to" in line and "\n" not in line
    assert draft_path(tmp_path, 2, "alice").with_suffix(".bad").exists()


def test_a_person_may_not_preserve_in_a_service_session(path: Path) -> None:
    """Decision 534: PRESERVE fires only in research sessions, whoever takes the session."""
    from dataclasses import replace

    from curiosity_tui.protocol.context import SessionSettings
    from curiosity_tui.protocol.tension_options import TensionOptions

    with Ledger.open(path, write=True) as led:
        inp = human_session_input(led, 2)
        source = led.sources()[0].id
        st = replace(
            SessionSettings.from_meta(led.meta), tension=TensionOptions(service_sessions=(2,))
        )
        before = len(list(led.events()))
        with pytest.raises(InputError, match="service session"):
            commit_human_session(led, 2, "alice", preserve(inp.focus, "r1", source), settings=st)
        assert len(list(led.events())) == before  # nothing written
