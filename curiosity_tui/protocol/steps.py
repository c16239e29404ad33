"""The protocol package (configurations C), one function per step, in the order of spec S5:

1. :func:`focus_step` — forced focus (curator priority, else the queue; optionally no re-selection);
2. :func:`candidates_step` — three candidates ∥ judge-before ∥ the checker calls, concurrently;
   :func:`judges_step` — medoid by embedding cosine, the paired judge-after, tension and Δ
   (``tension_step.py``, under the run's tension setting, issue 26);
3. :func:`decision_step` — PRESERVE iff Δ < −ε, else ANSWER (``tension_step.py``: Δ per
   candidate and its fallback, service sessions);
4. (the open layer comes back inside the deliverable and is applied with it);
5. :func:`checks_step` — which requirements of the focus get a checker call (pilot-02), with
   their retrieved passages; it runs before the candidates because its calls ride in their
   concurrent round ("calls that do not depend on each other run concurrently");
6. :func:`deliverable_step` — the one structured final call;
7. :func:`apply_step` — everything in one batch, then snapshot, decay, snapshot, record, commit.

:func:`run_protocol` runs them. A failure in any step leaves the ledger as it was (nothing is
written before :func:`apply_step`, which writes one batch).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from curiosity_tui.contract.downgrades import propose_in_batch
from curiosity_tui.contract.transitions import attempt_closure, record_check
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.events import CandidatePreserved
from curiosity_tui.ledger.ledger import Batch, Ledger
from curiosity_tui.ledger.models import RunMeta, SessionClosure, SessionCounts
from curiosity_tui.ledger.node_record import NodeRecord, RequirementEntry, requirements
from curiosity_tui.ledger.queue import select_focus
from curiosity_tui.ledger.render import focus_facts, render_session_input
from curiosity_tui.ledger.transitions import resurface
from curiosity_tui.protocol import prompts
from curiosity_tui.protocol.apply import (
    apply_actions,
    apply_facts,
    apply_return_condition,
    existing,
    finish,
    new_questions,
    req_id,
    session_batch,
)
from curiosity_tui.protocol.call_specs import (
    checker_spec,
    deliverable_spec,
    judge_before_spec,
    live_ids,
)
from curiosity_tui.protocol.context import SessionContext, SessionFailure, prompt_estimate
from curiosity_tui.protocol.schemas import (
    CheckerResponse,
    CheckResult,
    DeliverableResponse,
    JudgeBeforeResponse,
)
from curiosity_tui.protocol.stop_advice import NO_OPEN_QUESTION
from curiosity_tui.protocol.tension import Decision
from curiosity_tui.protocol.tension_step import Evaluation, decision_step, judges_step


@dataclass(frozen=True)
class Focus:
    """The session's forced focus and what its calls receive about it."""

    id: str
    node: NodeRecord
    question: str
    facts: list[str]  # the last six facts of the focus
    rendering: str  # the whole state, in queue order (the deliverable's input)


@dataclass(frozen=True)
class CheckPlan:
    """The requirements of the focus that get a checker call, and their retrieved passages."""

    requirements: list[RequirementEntry]
    passages: dict[str, list[tuple[str, str]]]


@dataclass(frozen=True)
class FirstRound:
    """The concurrent round's replies."""

    candidates: list[str]
    before: JudgeBeforeResponse
    checks: list[CheckerResponse]  # in the order of CheckPlan.requirements


async def run_protocol(
    ctx: SessionContext, meta: RunMeta, embedder: Any, previous_focus: str | None
) -> None:
    focus = focus_step(ctx, previous_focus)
    plan = await checks_step(ctx, focus)
    first = await candidates_step(ctx, focus, plan)
    evaluated = await judges_step(ctx, focus, first, embedder)
    decision, evaluation = decision_step(ctx, evaluated, first.candidates)
    deliv = await deliverable_step(ctx, meta, focus, plan, first, evaluation, decision)
    apply_step(ctx, focus, plan, first, evaluation, decision, deliv)


# --------------------------------------------------------------------------- 1. focus


def focus_step(ctx: SessionContext, previous_focus: str | None) -> Focus:
    st = ctx.settings
    nodes = ctx.led.raw_nodes()
    rendering = render_session_input(nodes, ctx.t)
    ctx.record.inputs["rendering"] = rendering
    focus = select_focus(
        nodes.values(),
        ctx.t,
        use_curator=st.use_curator_priority,
        previous_focus=previous_focus,
        no_reselect=st.no_reselect,
    )
    if focus is None:
        raise SessionFailure(ctx.t, NO_OPEN_QUESTION, ctx.record)
    ctx.record.focus = focus
    node = nodes[focus]
    return Focus(focus, node, node["text"], focus_facts(node), rendering)


# --------------------------------------------------------------------------- 2. candidates, judges


async def candidates_step(ctx: SessionContext, focus: Focus, plan: CheckPlan) -> FirstRound:
    """Three candidates ∥ judge-before ∥ the planned checker calls, all at once."""
    st = ctx.settings
    cand_msgs = prompts.candidate_messages(focus.question, focus.facts)
    cand_calls = [_candidate_call(ctx, cand_msgs, i) for i in (1, 2, 3)]
    jb_call = ctx.ask(
        judge_before_spec(),
        kind="judge-before",
        messages=prompts.judge_before_messages(focus.question, focus.facts),
        cap=st.judge_cap,
        internal=True,
        key="judge-before",
    )
    check_calls = [_checker_call(ctx, focus, plan, r) for r in plan.requirements]
    results = await asyncio.gather(*cand_calls, jb_call, *check_calls)
    before = results[3]
    assert isinstance(before, JudgeBeforeResponse)
    checks = [c for c in results[4:] if isinstance(c, CheckerResponse)]
    return FirstRound([str(c) for c in results[:3]], before, checks)


async def _candidate_call(ctx: SessionContext, messages: list[dict[str, str]], i: int) -> str:
    """One candidate. The client's coroutine is made here, inside the task gather gives this
    one: a run cancelled before that task starts then leaves no coroutine never awaited."""
    st = ctx.settings
    text: str = await ctx.call(
        ctx.client.complete(
            kind="candidate",
            session=ctx.t,
            messages=messages,
            max_tokens=st.fit(st.candidate_cap, messages),
            internal=True,
        ),
        key=f"candidate-{i}",
    )
    return text


def _checker_call(ctx: SessionContext, focus: Focus, plan: CheckPlan, r: RequirementEntry) -> Any:
    st = ctx.settings
    messages = prompts.checker_messages(
        focus.question,
        r["id"],
        r["text"],
        st.contract.checker_instruction,
        plan.passages.get(r["id"], []),
    )
    return ctx.ask(
        checker_spec(r["id"], [s.id for s in ctx.led.sources()]),
        kind="checker",
        messages=messages,
        cap=st.checker_cap,
        internal=True,
        key=f"checker-{r['id']}",
    )


# --------------------------------------------------------------------------- 5. checks


async def checks_step(ctx: SessionContext, focus: Focus) -> CheckPlan:
    """pilot-02: every unchecked / not satisfied requirement of the focus, as far as the budget
    leaves room after the candidates, judges and deliverable; pilot-01 checks in the deliverable."""
    st = ctx.settings
    to_check: list[RequirementEntry] = []
    if not st.contract.checks_in_deliverable:
        to_check = [
            r for r in requirements(focus.node) if r["status"] in ("unchecked", "not_satisfied")
        ]
    judges = 2 + (2 if st.tension.per_candidate else 0)  # Δ per candidate: two more judge-afters
    reserve = 3 * st.candidate_cap + judges * st.judge_cap + st.deliverable_min
    room = max(0, (st.session_budget - reserve) // st.checker_cap)
    if len(to_check) > room:
        ctx.rejected.append(f"budget: {len(to_check) - room} check(s) not run this session")
        to_check = to_check[:room]
    passages = await _retrieve(ctx.led, to_check, st.retrieval_k) if to_check else {}
    return CheckPlan(to_check, passages)


async def _retrieve(
    led: Ledger, reqs: list[RequirementEntry], k: int
) -> dict[str, list[tuple[str, str]]]:
    if not led.sources():
        return {}
    from curiosity_tui.contract.retrieval import retrieve

    return await asyncio.to_thread(retrieve, led, [(r["id"], r["text"]) for r in reqs], k)


# --------------------------------------------------------------------------- 6. deliverable


async def deliverable_step(
    ctx: SessionContext,
    meta: RunMeta,
    focus: Focus,
    plan: CheckPlan,
    first: FirstRound,
    evaluation: Evaluation,
    decision: Decision,
) -> DeliverableResponse:
    """The final call: the rendering and the selected candidate in full (also when withheld)."""
    st = ctx.settings
    check_summary = "\n".join(
        f"- {r['id']}: {'satisfied (claimed)' if c.satisfied else 'not satisfied'}"
        for r, c in zip(plan.requirements, first.checks, strict=True)
    )
    rc = focus.node.get("return_condition")
    reqs = [
        (r["id"], r["text"])
        for r in (rc["required_facts"] if rc else [])
        if r["status"] != "waived"
    ]
    left = ctx.budget.left
    if left < st.deliverable_min:
        raise SessionFailure(
            ctx.t,
            f"session budget exhausted before the deliverable ({left} tokens left)",
            ctx.record,
        )
    messages = prompts.deliverable_messages(
        seed=meta.seed,
        rendering=focus.rendering,
        focus_id=focus.id,
        focus_text=focus.question,
        decision=decision,
        candidate=evaluation.selected,
        open_layer_min=st.open_layer_min,
        checks_in_deliverable=st.contract.checks_in_deliverable,
        checker_instruction=st.contract.checker_instruction,
        required_facts=reqs,
        check_summary=check_summary,
    )
    nodes = ctx.led.raw_nodes()
    spec = deliverable_spec(
        node_ids=sorted(nodes),
        live_ids=live_ids(nodes),
        focus_id=focus.id,
        requirement_ids=[rid for rid, _ in reqs],
        open_layer_min=st.open_layer_min,
        checks_in_deliverable=st.contract.checks_in_deliverable,
        downgrades_allowed=st.contract.downgrades_allowed,
        preserve=decision == "PRESERVE",
        source_ids=[s.id for s in ctx.led.sources()],
    )
    cap = _deliverable_cap(ctx, messages)
    deliv = await ctx.ask(
        spec, kind="deliverable", messages=messages, cap=cap, internal=False, key="deliverable"
    )
    assert isinstance(deliv, DeliverableResponse)
    # the reply the deliverable came from (a mended one: the reply mended; decisions 550, 600)
    if ctx.answered_by["deliverable"].finish_reason == "length":
        raise SessionFailure(
            ctx.t, "the deliverable was truncated (finish_reason length)", ctx.record
        )
    return deliv


DELIVERABLE_FLOOR = 256  # fewer tokens than this cannot hold an open layer


def _deliverable_cap(ctx: SessionContext, messages: list[dict[str, str]]) -> int:
    """What is left of the session budget (at most ``deliverable_cap``), inside the context."""
    st = ctx.settings
    left = ctx.budget.left
    cap = min(left, st.deliverable_cap) if st.deliverable_cap else left
    fitted = st.fit(cap, messages)
    if fitted < min(cap, DELIVERABLE_FLOOR):
        raise SessionFailure(
            ctx.t,
            f"the deliverable's prompt (~{prompt_estimate(messages)} tokens) leaves {fitted} of "
            f"the {st.context_window}-token context for the reply (need {DELIVERABLE_FLOOR}); "
            "a larger --context-window on the server, or a smaller ledger",
            ctx.record,
        )
    return cap


# --------------------------------------------------------------------------- 7. apply


@dataclass(frozen=True)
class Outcome:
    """What the session decided, and what it keeps: the model's selected candidate and its Δ;
    for a person (protocol/human_session.py) their withheld answer, if any, and no Δ."""

    decision: Decision
    candidate: str | None
    delta: float | None


def apply_step(
    ctx: SessionContext,
    focus: Focus,
    plan: CheckPlan,
    first: FirstRound,
    evaluation: Evaluation,
    decision: Decision,
    deliv: DeliverableResponse,
) -> None:
    """Everything in one batch, in the order the journal shows (docs/protocol.md, step 8)."""
    planned = [(r["id"], c) for r, c in zip(plan.requirements, first.checks, strict=True)]
    outcome = Outcome(decision, evaluation.selected, evaluation.delta)
    with session_batch(ctx, focus.id) as b:
        write_deliverable(
            b,
            ctx,
            focus.id,
            outcome,
            deliv,
            planned=planned,
            deliverable_checks=ctx.settings.contract.checks_in_deliverable,
        )


def write_deliverable(
    b: Batch,
    ctx: SessionContext,
    focus_id: str,
    outcome: Outcome,
    deliv: DeliverableResponse,
    *,
    planned: Sequence[tuple[str, CheckResult]],
    deliverable_checks: bool,
) -> None:
    """The one apply path of a protocol session's deliverable, a model's or a person's, into
    the open batch: focus, planned checks, actions, facts, the deliverable's checks, new
    questions, the open layer, the decision, downgrade proposals; then the record and finish."""
    resurface(b, focus_id, "forced_focus", "system")
    n_checks = _apply_planned_checks(b, ctx, focus_id, planned)
    actions = apply_actions(b, ctx, deliv.actions, focus=focus_id)
    n_facts = apply_facts(b, ctx, deliv.facts)
    if deliverable_checks:
        n_checks += _apply_deliverable_checks(b, ctx, focus_id, deliv)
    more = new_questions(
        b, ctx, deliv.new_questions, origin="new_question", default_parent=focus_id
    )
    living = new_questions(
        b, ctx, deliv.open_layer.living_questions, origin="open_layer", default_parent=focus_id
    )
    _apply_decision(b, ctx, focus_id, outcome, deliv)
    _apply_downgrade_proposals(b, ctx, deliv)
    ctx.record.questions = living + more
    ctx.record.counts = SessionCounts(
        voluntary_actions=actions,
        new_questions=len(more),
        open_layer=len(living),
        dependency_checks=n_checks,
        facts=n_facts,
        forced_focus=True,
    )
    ctx.record.output_text = deliverable_text(deliv, outcome.decision)
    finish(b, ctx, decay=True)


def _apply_planned_checks(
    b: Batch, ctx: SessionContext, focus_id: str, planned: Sequence[tuple[str, CheckResult]]
) -> int:
    """pilot-02: the checker calls' results (evidence record → match check → the check)."""
    for rid, c in planned:
        record_check(
            b,
            ctx.settings.contract,
            focus_id,
            rid,
            satisfied=c.satisfied,
            evidence_text=c.evidence,
            source_id=c.source_id,
            passage=c.passage,
            actor=ctx.actor,
        )
    return len(planned)


def _apply_deliverable_checks(
    b: Batch, ctx: SessionContext, focus_id: str, deliv: DeliverableResponse
) -> int:
    """The checks that came back inside the deliverable (pilot-01; a person's, any contract)."""
    contract = ctx.settings.contract
    current = {r["id"] for r in requirements(b.node(focus_id))}
    n = 0
    for dc in deliv.checks:
        rid = req_id(dc.fact_id, focus_id)
        if rid not in current:
            ctx.rejected.append(f"check: {focus_id} has no required fact {dc.fact_id!r}")
            continue
        record_check(
            b,
            contract,
            focus_id,
            rid,
            satisfied=dc.satisfied,
            evidence_text=dc.evidence,
            source_id=dc.source_id,
            passage=dc.passage,
            actor=ctx.actor,
        )
        n += 1
    return n


def _apply_decision(
    b: Batch, ctx: SessionContext, focus_id: str, outcome: Outcome, deliv: DeliverableResponse
) -> None:
    """PRESERVE: keep the candidate, set or revise the return condition. ANSWER: try closure."""
    if outcome.decision == "PRESERVE":
        if outcome.candidate is not None:
            kept = CandidatePreserved(text=outcome.candidate, delta=outcome.delta)
            b.emit(kept, node=focus_id, actor=ctx.actor)
        apply_return_condition(b, focus_id, deliv.open_layer.return_condition, actor=ctx.actor)
        return
    answer = (deliv.answer or "").strip() or (outcome.candidate or "")
    out = attempt_closure(
        b, ctx.settings.contract, focus_id, answer=answer, delta=outcome.delta, actor=ctx.actor
    )
    ctx.record.closure = SessionClosure(closed=out.closed, unmet=list(out.unmet))


def _apply_downgrade_proposals(b: Batch, ctx: SessionContext, deliv: DeliverableResponse) -> None:
    if not ctx.settings.contract.downgrades_allowed:
        return
    for p in deliv.downgrade_proposals:
        nid = existing(b, ctx, p.node, "downgrade proposal")
        if nid is None:
            continue
        try:
            propose_in_batch(
                b,
                nid,
                req_id(p.fact_id, nid),
                p.proposal,
                grounds=p.grounds,
                actor=ctx.actor,
                new_text=p.new_text,
            )
        except TransitionError as err:
            ctx.rejected.append(f"downgrade proposal: {err}")


def deliverable_text(d: DeliverableResponse, decision: str) -> str:
    """The plain text of what a protocol session delivered (``SessionRecord.output_text``)."""
    lines: list[str] = []
    if decision == "ANSWER" and d.answer:
        lines += [d.answer.strip(), ""]
    if d.open_layer.node_status.strip():
        lines += [d.open_layer.node_status.strip(), ""]
    for q in d.open_layer.living_questions:
        lines.append(f"- {q.text.strip()}")
    for q in d.new_questions:
        lines.append(f"- {q.text.strip()}")
    for f in d.facts:
        lines.append(f"* {f.text.strip()}")
    for a in d.actions:
        if a.note.strip():
            lines.append(f"> {a.note.strip()}")
    rc = d.open_layer.return_condition
    if decision == "PRESERVE" and rc is not None:
        for t in rc.required_facts:
            lines.append(f"? {t.strip()}")
        if rc.closure_test.strip():
            lines.append(f"= {rc.closure_test.strip()}")
    return "\n".join(lines).strip()
