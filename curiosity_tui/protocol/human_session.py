"""A person takes a session of configuration C (issue 15, the relay): what they receive and how
their deliverable is committed. No textual here: the app's screen calls these.

* :func:`human_session_input` — exactly what a model would receive for session ``t``: the
  rendering (:func:`~curiosity_tui.ledger.render.render_session_input`, the same bytes), the
  forced focus (:func:`~curiosity_tui.ledger.queue.select_focus`, the same queue), the focus's
  requirements with the passages retrieval hands a checker (the same retrieval), and — when a
  model ran the judge-before for this session — its framings and dependencies, saying which.
* :func:`check_human_deliverable` — the deliverable's problems under the SAME rules as a
  model's (:func:`~curiosity_tui.protocol.call_specs.deliverable_spec`): the enforced rules, and
  the id rules a model may break (its breach is dropped and listed) but a form must not.
* :func:`commit_human_session` — one batch through the model session's apply path
  (:func:`~curiosity_tui.protocol.steps.write_deliverable`), every event by ``human:<name>``;
  the decision is the person's, with their reason; no Δ is invented (tension fields None).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curiosity_tui.clock import utc_now_micro as utc_now
from curiosity_tui.contract.evidence import match_passage
from curiosity_tui.contract.sources import read_stored_source
from curiosity_tui.errors import InputError, TransitionError
from curiosity_tui.ledger.batch import valid_actor
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import Mind, SessionRecord
from curiosity_tui.ledger.node_record import RequirementEntry, requirements
from curiosity_tui.ledger.queue import select_focus
from curiosity_tui.ledger.render import render_session_input
from curiosity_tui.modelio.call_schemas import CallSpec, Rule
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.protocol.apply import session_batch
from curiosity_tui.protocol.call_specs import deliverable_spec, live_ids
from curiosity_tui.protocol.context import Budget, SessionContext, SessionSettings
from curiosity_tui.protocol.reply_shapes import to_wire
from curiosity_tui.protocol.schemas import DeliverableResponse, JudgeBeforeResponse
from curiosity_tui.protocol.steps import Outcome, write_deliverable
from curiosity_tui.provenance import if_changed

__all__ = [
    "HumanDeliverable",
    "HumanSessionInput",
    "JudgeView",
    "Requirement",
    "check_human_deliverable",
    "commit_human_session",
    "human_session_input",
    "passage_problem",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JudgeView(_Strict):
    """The judge-before a model ran for this session, shown to the person (``by`` says who)."""

    by: str
    framings: list[str]
    dependencies: list[str]


class Requirement(_Strict):
    """A required fact of the focus still in force, and what retrieval finds for it."""

    id: str
    text: str
    status: str
    passages: list[tuple[str, str]] = Field(default_factory=list)  # (source id, passage)


class HumanSessionInput(_Strict):
    """What the person receives for session ``session``: the model's input, nothing more."""

    session: int
    focus: str
    focus_text: str
    rendering: str  # the exact bytes a model's deliverable call receives as the ledger
    requirements: list[Requirement]
    judge: JudgeView | None = None
    contract: str
    open_layer_min: int
    downgrades_allowed: bool
    node_ids: list[str]
    live_ids: list[str]
    source_ids: list[str]


class HumanDeliverable(_Strict):
    """The person's session: their decision and its stated reason, and the deliverable (the
    model's schema; under PRESERVE ``answer`` is the answer they withhold, or null)."""

    decision: Literal["ANSWER", "PRESERVE"]
    reason: str
    deliverable: DeliverableResponse


def _previous_focus(led: Ledger) -> str | None:
    records = led.session_records()
    return records[-1].focus if records else None


def human_session_input(
    led: Ledger,
    t: int,
    *,
    settings: SessionSettings | None = None,
    judge: JudgeBeforeResponse | None = None,
    judge_by: str | None = None,
) -> HumanSessionInput:
    """Session ``t``'s input for a person. ``judge``: the judge-before a model (``judge_by``)
    ran for this session, if one did; the person then sees its framings and dependencies."""
    st = settings or SessionSettings.from_meta(led.meta)
    if st.config.arm != "protocol":
        raise InputError(f"a human session needs configuration C, not {st.config.name}")
    nodes = led.raw_nodes()
    focus = select_focus(
        nodes.values(),
        t,
        use_curator=st.use_curator_priority,
        previous_focus=_previous_focus(led),
        no_reselect=st.no_reselect,
    )
    if focus is None:
        raise InputError(f"session {t}: no open question to focus on")
    node = nodes[focus]
    reqs = [r for r in requirements(node) if r["status"] != "waived"]
    passages = _passages(led, reqs, st.retrieval_k)
    return HumanSessionInput(
        session=t,
        focus=focus,
        focus_text=node["text"],
        rendering=render_session_input(nodes, t),
        requirements=[
            Requirement(
                id=r["id"], text=r["text"], status=r["status"], passages=passages.get(r["id"], [])
            )
            for r in reqs
        ],
        judge=None
        if judge is None
        else JudgeView(
            by=judge_by or "model",
            framings=list(judge.framings),
            dependencies=list(judge.dependencies),
        ),
        contract=st.contract.name,
        open_layer_min=st.open_layer_min,
        downgrades_allowed=st.contract.downgrades_allowed,
        node_ids=sorted(nodes),
        live_ids=live_ids(nodes),
        source_ids=[s.id for s in led.sources()],
    )


def _passages(
    led: Ledger, reqs: list[RequirementEntry], k: int
) -> dict[str, list[tuple[str, str]]]:
    """The checker's retrieval (contract/retrieval.py), the same top-k for each requirement."""
    if not reqs or not led.sources():
        return {}
    from curiosity_tui.contract.retrieval import retrieve

    return retrieve(led, [(r["id"], r["text"]) for r in reqs], k)


def human_spec(inp: HumanSessionInput, decision: str) -> CallSpec:
    """The model's deliverable spec for this session. The person does the checker's work too,
    so their checks ride in the deliverable under either contract."""
    return deliverable_spec(
        node_ids=inp.node_ids,
        live_ids=inp.live_ids,
        focus_id=inp.focus,
        requirement_ids=[r.id for r in inp.requirements],
        open_layer_min=inp.open_layer_min,
        checks_in_deliverable=True,
        downgrades_allowed=inp.downgrades_allowed,
        preserve=decision == "PRESERVE",
        source_ids=inp.source_ids,
    )


def check_human_deliverable(inp: HumanSessionInput, hd: HumanDeliverable) -> list[str]:
    """Every problem with the person's deliverable (empty: it can be committed)."""
    problems: list[str] = []
    if not hd.reason.strip():
        problems.append("decision: state a reason for ANSWER or PRESERVE")
    if hd.decision == "ANSWER" and not (hd.deliverable.answer or "").strip():
        problems.append("answer: ANSWER needs the answer")
    problems.extend(_unrecordable_revision(inp, hd))
    spec = human_spec(inp, hd.decision)
    try:  # the model's rules are said on the reply's wire shape
        reply = spec.model.model_validate(to_wire("deliverable", hd.deliverable.model_dump()))
    except ValidationError as err:
        first = err.errors()[0]
        problems.append(f"{'.'.join(map(str, first['loc']))}: {first['msg']}")
        return problems
    try:
        spec.check(reply)
    except ValueError as err:
        problems.append(str(err))
    # the rules a model's reply may break (the apply step drops what names an unknown id and
    # lists it): a form may not; only the size bounds that fit a reply in its token cap go
    stricter = CallSpec(spec.model, tuple(_person_rules(spec)))
    try:
        stricter.check(reply)
    except ValueError as err:
        problems.append(str(err))
    return problems


def _unrecordable_revision(inp: HumanSessionInput, hd: HumanDeliverable) -> list[str]:
    """A revision the ledger would drop without a word (decision 225: a form asks again).
    The S3 rule revises a return condition only with required facts; actions and a closure
    test alone leave the current one as it is."""
    rc = hd.deliverable.open_layer.return_condition
    if hd.decision != "PRESERVE" or rc is None or not inp.requirements:
        return []
    if any(t.strip() for t in rc.required_facts):
        return []
    if not (any(a.strip() for a in rc.required_actions) or rc.closure_test.strip()):
        return []
    kept = ", ".join(r.id for r in inp.requirements)
    return [
        f"return condition: required actions or a closure test alone cannot revise "
        f"{inp.focus}'s return condition (the ledger would keep {kept} and the old closure "
        "test, and drop what you typed); list the required facts too (those to keep as "
        "well), or leave all three empty"
    ]


def _person_rules(spec: CallSpec) -> list[Rule]:
    return [
        replace(r, enforced=True, max_length=None)
        for r in spec.rules
        if not r.enforced and r.path != "answer"
    ]


def passage_problem(led: Ledger, source_id: str | None, passage: str | None) -> str:
    """Why a cited passage would stay ``proposed`` ('' when the match check verifies it): the
    same match the commit runs (contract/evidence.py)."""
    if not source_id or not passage:
        return "no source passage cited"
    src = next((s for s in led.sources() if s.id == source_id), None)
    if src is None:
        return f"cited source {source_id!r} does not exist in this ledger"
    try:
        text = read_stored_source(led.path, src.model_dump())
    except TransitionError as err:
        return str(err)
    return match_passage(passage, text).reason


def commit_human_session(
    led: Ledger,
    t: int,
    person: str,
    hd: HumanDeliverable,
    *,
    settings: SessionSettings | None = None,
    started: str | None = None,
) -> SessionRecord:
    """Validate and commit the person's session ``t`` as one batch (actor ``human:<person>``).
    Bad input raises :class:`InputError` naming every problem; nothing is written then."""
    actor = f"human:{person}"
    if not valid_actor(actor):
        raise InputError(f"invalid person name {person!r} (no surrounding spaces, not empty)")
    if t != led.last_session + 1:
        raise InputError(
            f"session {t} is not the next session (the ledger is at {led.last_session})"
        )
    st = settings or SessionSettings.from_meta(led.meta)
    inp = human_session_input(led, t, settings=st)
    problems = check_human_deliverable(inp, hd)
    if hd.decision == "PRESERVE" and st.tension.kind(t) == "service":  # decision 534
        problems.append(
            "decision: this is a service session (the run's service_sessions): PRESERVE may "
            "fire only in research sessions; answer"
        )
    if problems:
        raise InputError(f"session {t}: " + "; ".join(problems))
    record = SessionRecord(
        session=t,
        config=st.config.name,
        contract=st.contract.name,
        epsilon=st.epsilon,
        started=started or utc_now(),
        focus=inp.focus,
        decision=hd.decision,
        mind=Mind(kind="human", name=person),
        provenance=if_changed(led.meta.provenance),
        inputs={"rendering": inp.rendering},
        outputs={"human": hd.model_dump_json()},
    )
    # a person makes no model call: the context's client is never used on this path
    ctx = SessionContext(led, cast(ModelClient, None), t, st, record, Budget(0), actor=actor)
    deliv = hd.deliverable
    kept = (deliv.answer or "").strip() or None if hd.decision == "PRESERVE" else None
    try:
        with session_batch(ctx, inp.focus) as b:
            write_deliverable(
                b,
                ctx,
                inp.focus,
                Outcome(hd.decision, kept, None),
                deliv,
                planned=[],
                deliverable_checks=True,
            )
    except TransitionError as err:
        raise InputError(f"session {t}: {err}") from None
    return record
