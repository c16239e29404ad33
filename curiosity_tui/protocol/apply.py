"""Writing a session into its batch: the one way a session batch opens (``session_started``) and
closes (snapshots, decay, session record), and the model's proposals applied as events.

Model output is untrusted: a proposal naming a node or requirement that does not exist is not
applied; it is listed in the session record's ``rejected``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from curiosity_tui.clock import utc_now_micro as utc_now
from curiosity_tui.contract.transitions import attempt_closure
from curiosity_tui.ledger.events import (
    FactAttached,
    ReturnConditionRevised,
    ReturnConditionSet,
    SessionStarted,
)
from curiosity_tui.ledger.ledger import Batch
from curiosity_tui.ledger.models import RequiredFact
from curiosity_tui.ledger.node_record import NOT_LIVE
from curiosity_tui.ledger.revision import revise
from curiosity_tui.ledger.transitions import apply_decay, resurface
from curiosity_tui.protocol.context import SessionContext, norm_id
from curiosity_tui.protocol.fact_sources import checked_source
from curiosity_tui.protocol.schemas import (
    FactItem,
    NewQuestion,
    NodeAction,
    ReturnConditionProposal,
)


@contextmanager
def session_batch(ctx: SessionContext, focus: str | None) -> Iterator[Batch]:
    """Open session ``ctx.t``'s batch, its first event ``session_started``; the batch commits
    when the block ends without an error (and is dropped, whole, when it raises)."""
    with ctx.led.batch(ctx.t) as b:
        b.emit(SessionStarted(focus=focus, config=ctx.settings.config.name))
        yield b


def finish(b: Batch, ctx: SessionContext, *, decay: bool) -> None:
    """Close a session batch: snapshot, decay (store-keeping arms) and snapshot, the record."""
    b.snapshot("session")
    if decay:
        apply_decay(b, ctx.t)
        b.snapshot("decay")
    ctx.record.finished = utc_now()
    ctx.record.rejected = list(ctx.rejected)
    ctx.record.budget_used = ctx.budget.used
    b.record_session(ctx.record)


def existing(b: Batch, ctx: SessionContext, node_id: str | None, what: str) -> str | None:
    nid = norm_id(node_id)
    if nid is None or nid not in b.raw_nodes():
        ctx.rejected.append(f"{what}: unknown node {node_id!r}")
        return None
    return nid


def apply_actions(
    b: Batch, ctx: SessionContext, actions: list[NodeAction], *, focus: str | None
) -> int:
    """Voluntary actions on existing nodes; returns how many were applied."""
    applied = 0
    for a in actions:
        nid = existing(b, ctx, a.node, f"action {a.action}")
        if nid is None:
            continue
        n = b.node(nid)
        if n["status"] in NOT_LIVE:
            ctx.rejected.append(f"action {a.action}: {nid} is {n['status']}")
            continue
        if a.action == "close":
            if nid == focus:
                ctx.rejected.append(
                    f"action close on the focus {nid}: closure of the focus follows the decision"
                )
                continue
            resurface(b, nid, "voluntary", ctx.actor)
            attempt_closure(
                b,
                ctx.settings.contract,
                nid,
                answer=a.note,
                delta=None,
                actor=ctx.actor,
                reason="close action",
            )
        else:  # work / revive
            resurface(b, nid, "voluntary", ctx.actor)
        applied += 1
    return applied


def apply_facts(b: Batch, ctx: SessionContext, facts: list[FactItem]) -> int:
    n = 0
    for f in facts:
        nid = existing(b, ctx, f.node, "fact")
        text = f.text.strip()
        if nid is None or not text:
            continue
        src, dropped = checked_source(
            ctx.led.path, b.state.meta, b.state.sources, f.source_id, text
        )
        if dropped:  # a cited source the fact does not quote (decision 407)
            ctx.rejected.append(dropped)
        b.emit(FactAttached(text=text, source=src), node=nid, actor=ctx.actor)
        n += 1
    return n


def new_questions(
    b: Batch,
    ctx: SessionContext,
    questions: list[NewQuestion],
    *,
    origin: str,
    default_parent: str | None,
) -> list[str]:
    out = []
    for q in questions:
        text = q.text.strip()
        if not text:
            continue
        parent = norm_id(q.parent) if q.parent else default_parent
        if parent is not None and parent not in b.raw_nodes():
            ctx.rejected.append(
                f"question parent: unknown node {q.parent!r}; attached to {default_parent or 'root'}"
            )
            parent = default_parent
        b.create_node(text, parent=parent, origin=origin, actor=ctx.actor)
        out.append(text)
    return out


def req_id(raw: str, node: str) -> str:
    """Accept 'r2', 'R2', 'q1.r2', 'q1/r2' for requirement r2 of ``node``."""
    v = raw.strip().lower()
    for sep in (".", "/", ":"):
        if sep in v:
            v = v.rsplit(sep, 1)[1]
    return v


def apply_return_condition(
    b: Batch, node_id: str, proposal: ReturnConditionProposal | None, *, actor: str = "model"
) -> None:
    """Set a first return condition, or revise the current one under the S3 rule."""
    if proposal is None:
        return
    n = b.node(node_id)
    texts = [t.strip() for t in proposal.required_facts if t.strip()]
    rc = n["return_condition"]
    if rc is None:
        counter = n["requirement_counter"]
        rfs = [RequiredFact(id=f"r{counter + i}", text=t) for i, t in enumerate(texts, 1)]
        first = ReturnConditionSet(
            required_facts=rfs,
            required_actions=list(proposal.required_actions),
            closure_test=proposal.closure_test,
        )
        b.emit(first, node=node_id, actor=actor)
        return
    rev = revise(
        rc,
        texts,
        required_actions=list(proposal.required_actions),
        closure_test=proposal.closure_test,
        next_counter=n["requirement_counter"],
    )
    if rev is None:
        return
    revised = ReturnConditionRevised(
        required_facts=[RequiredFact.model_validate(r) for r in rev.required_facts],
        required_actions=rev.required_actions,
        closure_test=rev.closure_test,
        carried=rev.carried,
        retired=rev.retired,
        added=rev.added,
    )
    b.emit(revised, node=node_id, actor=actor)
