"""One session of a run, for each arm of S5, applied to the ledger as one unit or not at all.

The arms (``protocol/configs.py``): A answers the seed question; B asks bare questions; B-armed
asks writing into the store; C runs the protocol package, one function per step in
``protocol/steps.py`` (focus, candidates ∥ judge-before ∥ checks, judges, decision,
deliverable, apply). Every arm writes its session as one batch opened by
:func:`~curiosity_tui.protocol.apply.session_batch` (``session_started`` first) and closed by
:func:`~curiosity_tui.protocol.apply.finish` (snapshot, decay, snapshot, session record).

A failure anywhere before the commit leaves the ledger as it was; the attempt is recorded as
``session_failed`` (with its partial record) in a batch of its own, and the run can resume.
"""

from __future__ import annotations

from typing import Any

from curiosity_tui.clock import utc_now_micro as utc_now
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.events import SessionFailed
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import CallRecord, Mind, RunMeta, SessionCounts, SessionRecord
from curiosity_tui.ledger.render import render_session_input
from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.protocol import prompts
from curiosity_tui.protocol.apply import (
    apply_actions,
    apply_facts,
    finish,
    new_questions,
    session_batch,
)
from curiosity_tui.protocol.call_specs import armed_self_ask_spec, live_ids, self_ask_spec
from curiosity_tui.protocol.context import (
    Budget,
    SessionContext,
    SessionFailure,
    SessionSettings,
)
from curiosity_tui.protocol.schemas import ArmedSelfAskResponse, SelfAskResponse
from curiosity_tui.protocol.steps import run_protocol
from curiosity_tui.provenance import if_changed

__all__ = ["Budget", "SessionFailure", "SessionSettings", "run_session", "session_wall_time"]


async def run_session(
    led: Ledger,
    client: ModelClient,
    t: int,
    *,
    settings: SessionSettings | None = None,
    embedder: Any = None,
    previous_focus: str | None = None,
    carried_calls: list[CallRecord] | None = None,
    mind: Mind | None = None,
) -> SessionRecord:
    """Run session ``t`` and commit it. Raises :class:`SessionFailure` (after recording the
    failed attempt) if anything fails; the ledger is then exactly as before plus that record.
    ``mind``: who takes the session (a relay's model), named on its record."""
    st = settings or SessionSettings.from_meta(led.meta)
    meta = led.meta
    # assembled from already-typed parts and validated once, complete, when it is stored
    # (``Batch.record_session``): no validation here of a record that is still being filled
    record = SessionRecord.model_construct(
        session=t,
        config=st.config.name,
        contract=st.contract.name,
        epsilon=st.epsilon,
        started=utc_now(),
        mind=mind,
        provenance=if_changed(meta.provenance),  # what ran it, when not what created the run
        # the default-factory fields given: pydantic's model_construct inspects each factory's
        # signature on every call (~200 us for these six; given, the whole call is ~9 us)
        inputs={},
        outputs={},
        calls=[],
        counts=SessionCounts(),
        questions=[],
        rejected=[],
    )
    for c in carried_calls or []:
        record.calls.append(c)  # curator calls made before this session (outside its budget)
    ctx = SessionContext(led, client, t, st, record, Budget(st.session_budget))
    try:
        if st.config.arm == "answer":
            await _run_answer(ctx, meta)
        elif st.config.arm == "self-ask":
            await _run_self_ask(ctx, meta)
        elif st.config.arm == "armed-self-ask":
            await _run_armed(ctx, meta)
        else:
            await run_protocol(ctx, meta, embedder, previous_focus)
    except (ModelCallError, TransitionError, SessionFailure, ValueError) as err:
        reason = err.reason if isinstance(err, SessionFailure) else str(err)
        record.status = "failed"
        record.error = reason
        record.finished = utc_now()
        with led.batch(t, marker="batch_committed", label="failed session") as b:
            b.emit(SessionFailed(reason=reason, record=record.model_dump(mode="json")))
        raise SessionFailure(t, reason, record) from None
    return record


# --------------------------------------------------------------------------- arms A, B, B-armed


async def _run_answer(ctx: SessionContext, meta: RunMeta) -> None:
    ctx.record.inputs["rendering"] = ""
    messages = prompts.answer_messages(meta.seed)
    text = await ctx.call(
        ctx.client.complete(
            kind="answer",
            session=ctx.t,
            messages=messages,
            max_tokens=ctx.settings.fit(_final_cap(ctx), messages),
            internal=False,
        )
    )
    ctx.record.output_text = text
    with session_batch(ctx, None) as b:
        finish(b, ctx, decay=False)


async def _run_self_ask(ctx: SessionContext, meta: RunMeta) -> None:
    ctx.record.inputs["rendering"] = ""
    reply = await ctx.ask(
        self_ask_spec(),
        kind="self-ask",
        messages=prompts.self_ask_messages(meta.seed),
        cap=_final_cap(ctx),
        internal=False,
    )
    assert isinstance(reply, SelfAskResponse)
    qs = [q.text.strip() for q in reply.questions if q.text.strip()]
    ctx.record.questions = qs
    ctx.record.counts = SessionCounts(new_questions=len(qs))
    ctx.record.output_text = "\n".join(f"- {q}" for q in qs)
    with session_batch(ctx, None) as b:
        finish(b, ctx, decay=False)


async def _run_armed(ctx: SessionContext, meta: RunMeta) -> None:
    rendering = render_session_input(ctx.led.raw_nodes(), ctx.t)
    ctx.record.inputs["rendering"] = rendering
    nodes = ctx.led.raw_nodes()
    reply = await ctx.ask(
        armed_self_ask_spec(sorted(nodes), [s.id for s in ctx.led.sources()], live_ids(nodes)),
        kind="self-ask",
        messages=prompts.armed_self_ask_messages(meta.seed, rendering),
        cap=_final_cap(ctx),
        internal=False,
    )
    assert isinstance(reply, ArmedSelfAskResponse)
    with session_batch(ctx, None) as b:
        actions = apply_actions(b, ctx, reply.actions, focus=None)
        facts = apply_facts(b, ctx, reply.facts)
        qs = new_questions(b, ctx, reply.questions, origin="self_ask", default_parent=None)
        ctx.record.questions = qs
        ctx.record.counts = SessionCounts(
            voluntary_actions=actions, new_questions=len(qs), facts=facts
        )
        ctx.record.output_text = _armed_text(reply)
        finish(b, ctx, decay=True)


def _final_cap(ctx: SessionContext) -> int:
    """An arm's one call: what is left of the budget, at most the configured final cap."""
    left = ctx.budget.left
    cap = ctx.settings.deliverable_cap
    return min(left, cap) if cap else left


def _armed_text(reply: ArmedSelfAskResponse) -> str:
    lines = [f"- {q.text.strip()}" for q in reply.questions if q.text.strip()]
    lines += [f"* {f.text.strip()}" for f in reply.facts if f.text.strip()]
    lines += [f"> {a.note.strip()}" for a in reply.actions if a.note.strip()]
    return "\n".join(lines)


def session_wall_time(record: SessionRecord) -> float:
    """Seconds between start and finish of a session record (0 if unknown)."""
    from datetime import datetime

    try:
        a = datetime.strptime(record.started, "%Y-%m-%dT%H:%M:%S.%fZ")
        b = datetime.strptime(record.finished, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return 0.0
    return (b - a).total_seconds()
