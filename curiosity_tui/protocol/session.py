"""One session of a run, for each arm of S5, applied to the ledger as one unit or not at all.

The protocol package (C), per session (report §2):
1. forced focus (curator priority, else the automatic queue; optionally no re-selection);
2. three candidates (260-token cap) ∥ judge-before (≤ 5 framings, ≤ 8 dependencies)
   ∥ dependency checks (pilot-02: a checker call per open requirement, with retrieved passages);
3. medoid by embedding cosine; paired judge-after on it; tension, Δ;
4. <PRESERVE> iff Δ < −ε, else ANSWER (closure under the run's contract);
5. the deliverable: one structured call that receives the rendering and the selected
   candidate in full (also when withheld), returning actions, questions, facts, checks
   (pilot-01), the open layer and downgrade proposals;
6. apply everything in one batch, then snapshot, decay, snapshot, session record, commit.

A failure anywhere before the commit leaves the ledger as it was; the attempt is recorded as
``session_failed`` (with its partial record) in a batch of its own, and the run can resume.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from curiosity_tui.contract.downgrades import propose_in_batch
from curiosity_tui.contract.rules import Contract, get_contract
from curiosity_tui.contract.transitions import attempt_closure, record_check
from curiosity_tui.errors import CuriosityError, TransitionError
from curiosity_tui.ledger.ledger import Batch, Ledger, utc_now
from curiosity_tui.ledger.models import (
    CallRecord,
    RunMeta,
    SessionClosure,
    SessionCounts,
    SessionRecord,
    TensionTerms,
)
from curiosity_tui.ledger.queue import select_focus
from curiosity_tui.ledger.render import focus_facts, render_session_input
from curiosity_tui.ledger.revision import revise
from curiosity_tui.ledger.transitions import apply_decay, resurface
from curiosity_tui.protocol import prompts
from curiosity_tui.protocol.client import ModelCallError, ModelClient
from curiosity_tui.protocol.configs import Configuration, get_configuration
from curiosity_tui.protocol.schemas import (
    ArmedSelfAskResponse,
    CheckerResponse,
    DeliverableResponse,
    JudgeAfterResponse,
    JudgeBeforeResponse,
    SelfAskResponse,
    judge_after_pairing,
    open_layer_bounds,
)
from curiosity_tui.protocol.tension import decide, delta, disagreement, tension

T = TypeVar("T")


class SessionFailure(CuriosityError):
    """A session could not complete; nothing of it was applied."""

    def __init__(self, session: int, reason: str, record: SessionRecord) -> None:
        super().__init__(f"session {session} failed: {reason}")
        self.session = session
        self.reason = reason
        self.record = record


@dataclass
class SessionSettings:
    config: Configuration
    contract: Contract
    epsilon: float = 0.15
    open_layer_min: int = 1  # 1 = compulsory (pilot-01), 0 = optional
    no_reselect: bool = False
    use_curator_priority: bool = True
    session_budget: int = 4000
    curator_budget: int = 4000
    candidate_cap: int = 260
    judge_cap: int = 500
    checker_cap: int = 350
    deliverable_min: int = 800  # never start the final call with less than this left
    retrieval_k: int = 3

    @classmethod
    def from_meta(cls, meta: RunMeta) -> SessionSettings:
        return cls(
            config=get_configuration(meta.config),
            contract=get_contract(meta.contract),
            epsilon=meta.epsilon,
            open_layer_min=1 if meta.open_layer == "compulsory" else 0,
            no_reselect=meta.no_reselect,
            use_curator_priority=meta.curator != "none",
            session_budget=meta.session_budget,
            curator_budget=meta.curator_budget,
        )


@dataclass
class Budget:
    limit: int
    used: int = 0

    def take(self, record: CallRecord) -> None:
        self.used += record.completion_tokens

    @property
    def left(self) -> int:
        return self.limit - self.used


@dataclass
class _Ctx:
    led: Ledger
    client: ModelClient
    t: int
    settings: SettingsLike
    record: SessionRecord
    budget: Budget
    rejected: list[str] = field(default_factory=list)

    async def call(self, aw: Awaitable[tuple[T, CallRecord]], *, key: str | None = None) -> T:
        try:
            value, rec = await aw
        except ModelCallError as err:
            for r in err.records:
                self._keep(r, key)
            raise
        for earlier in rec.earlier:
            self._keep(earlier, key)
        self._keep(rec, key)
        return value

    def _keep(self, rec: CallRecord, key: str | None) -> None:
        self.record.calls.append(rec)
        self.budget.take(rec)
        name = key or rec.kind
        self.record.inputs.setdefault(name, rec.request_text)
        self.record.outputs[name] = rec.response_text


SettingsLike = SessionSettings


def _norm_id(value: str | None) -> str | None:
    if value is None:
        return None
    v = value.strip().lower()
    return v or None


async def run_session(
    led: Ledger,
    client: ModelClient,
    t: int,
    *,
    settings: SessionSettings | None = None,
    embedder: Any = None,
    previous_focus: str | None = None,
    carried_calls: list[CallRecord] | None = None,
) -> SessionRecord:
    """Run session ``t`` and commit it. Raises :class:`SessionFailure` (after recording the
    failed attempt) if anything fails; the ledger is then exactly as before plus that record."""
    st = settings or SessionSettings.from_meta(led.meta)
    meta = led.meta
    record = SessionRecord(
        session=t,
        config=st.config.name,
        contract=st.contract.name,
        epsilon=st.epsilon,
        started=utc_now(),
    )
    for c in carried_calls or []:
        record.calls.append(c)  # curator calls made before this session (outside its budget)
    ctx = _Ctx(led, client, t, st, record, Budget(st.session_budget))
    try:
        if st.config.arm == "answer":
            await _run_answer(ctx, meta)
        elif st.config.arm == "self-ask":
            await _run_self_ask(ctx, meta)
        elif st.config.arm == "armed-self-ask":
            await _run_armed(ctx, meta)
        else:
            await _run_protocol(ctx, meta, embedder, previous_focus)
    except (ModelCallError, TransitionError, SessionFailure, ValueError) as err:
        reason = err.reason if isinstance(err, SessionFailure) else str(err)
        record.status = "failed"
        record.error = reason
        record.finished = utc_now()
        with led.batch(t, marker="batch_committed", label="failed session") as b:
            b.emit(
                "session_failed",
                None,
                "system",
                {"reason": reason, "record": record.model_dump(mode="json")},
            )
        raise SessionFailure(t, reason, record) from None
    return record


# --------------------------------------------------------------------------- arms


def _finish(b: Batch, ctx: _Ctx, *, decay: bool) -> None:
    b.snapshot("session")
    if decay:
        apply_decay(b, ctx.t)
        b.snapshot("decay")
    ctx.record.finished = utc_now()
    ctx.record.rejected = list(ctx.rejected)
    ctx.record.budget_used = ctx.budget.used
    b.record_session(ctx.record)


async def _run_answer(ctx: _Ctx, meta: RunMeta) -> None:
    ctx.record.inputs["rendering"] = ""
    text = await ctx.call(
        ctx.client.complete(
            kind="answer",
            session=ctx.t,
            messages=prompts.answer_messages(meta.seed),
            max_tokens=ctx.budget.left,
            internal=False,
        )
    )
    ctx.record.output_text = text
    with ctx.led.batch(ctx.t) as b:
        b.emit(
            "session_started", None, "system", {"focus": None, "config": ctx.settings.config.name}
        )
        _finish(b, ctx, decay=False)


async def _run_self_ask(ctx: _Ctx, meta: RunMeta) -> None:
    ctx.record.inputs["rendering"] = ""
    reply = await ctx.call(
        ctx.client.structured(
            kind="self-ask",
            session=ctx.t,
            messages=prompts.self_ask_messages(meta.seed),
            schema=SelfAskResponse,
            max_tokens=ctx.budget.left,
            internal=False,
        )
    )
    qs = [q.text.strip() for q in reply.questions if q.text.strip()]
    ctx.record.questions = qs
    ctx.record.counts = SessionCounts(new_questions=len(qs))
    ctx.record.output_text = "\n".join(f"- {q}" for q in qs)
    with ctx.led.batch(ctx.t) as b:
        b.emit(
            "session_started", None, "system", {"focus": None, "config": ctx.settings.config.name}
        )
        _finish(b, ctx, decay=False)


def _existing(b: Batch, ctx: _Ctx, node_id: str | None, what: str) -> str | None:
    nid = _norm_id(node_id)
    if nid is None or nid not in b.nodes():
        ctx.rejected.append(f"{what}: unknown node {node_id!r}")
        return None
    return nid


def _apply_actions(b: Batch, ctx: _Ctx, actions: list[Any], *, focus: str | None) -> int:
    """Voluntary actions on existing nodes; returns how many were applied."""
    applied = 0
    for a in actions:
        nid = _existing(b, ctx, a.node, f"action {a.action}")
        if nid is None:
            continue
        n = b.node(nid)
        if n["status"] in ("closed", "archived", "merged"):
            ctx.rejected.append(f"action {a.action}: {nid} is {n['status']}")
            continue
        if a.action == "close":
            if nid == focus:
                ctx.rejected.append(
                    f"action close on the focus {nid}: closure of the focus follows the decision"
                )
                continue
            resurface(b, nid, "voluntary", "model")
            attempt_closure(
                b, ctx.settings.contract, nid, answer=a.note, delta=None, reason="close action"
            )
        else:  # work / revive
            resurface(b, nid, "voluntary", "model")
        applied += 1
    return applied


def _apply_facts(b: Batch, ctx: _Ctx, facts: list[Any]) -> int:
    n = 0
    for f in facts:
        nid = _existing(b, ctx, f.node, "fact")
        text = f.text.strip()
        if nid is None or not text:
            continue
        src = f.source_id if f.source_id in b.state.sources else None
        b.emit("fact_attached", nid, "model", {"text": text, "source": src})
        n += 1
    return n


def _new_questions(
    b: Batch, ctx: _Ctx, questions: list[Any], *, origin: str, default_parent: str | None
) -> list[str]:
    out = []
    for q in questions:
        text = q.text.strip()
        if not text:
            continue
        parent = _norm_id(q.parent) if q.parent else default_parent
        if parent is not None and parent not in b.nodes():
            ctx.rejected.append(
                f"question parent: unknown node {q.parent!r}; attached to {default_parent or 'root'}"
            )
            parent = default_parent
        b.create_node(text, parent=parent, origin=origin, actor="model")
        out.append(text)
    return out


async def _run_armed(ctx: _Ctx, meta: RunMeta) -> None:
    rendering = render_session_input(ctx.led.raw_nodes(), ctx.t)
    ctx.record.inputs["rendering"] = rendering
    reply = await ctx.call(
        ctx.client.structured(
            kind="self-ask",
            session=ctx.t,
            messages=prompts.armed_self_ask_messages(meta.seed, rendering),
            schema=ArmedSelfAskResponse,
            max_tokens=ctx.budget.left,
            internal=False,
        )
    )
    with ctx.led.batch(ctx.t) as b:
        b.emit(
            "session_started", None, "system", {"focus": None, "config": ctx.settings.config.name}
        )
        actions = _apply_actions(b, ctx, reply.actions, focus=None)
        facts = _apply_facts(b, ctx, reply.facts)
        qs = _new_questions(b, ctx, reply.questions, origin="self_ask", default_parent=None)
        ctx.record.questions = qs
        ctx.record.counts = SessionCounts(
            voluntary_actions=actions, new_questions=len(qs), facts=facts
        )
        ctx.record.output_text = _armed_text(reply)
        _finish(b, ctx, decay=True)


def _armed_text(reply: ArmedSelfAskResponse) -> str:
    lines = [f"- {q.text.strip()}" for q in reply.questions if q.text.strip()]
    lines += [f"* {f.text.strip()}" for f in reply.facts if f.text.strip()]
    lines += [f"> {a.note.strip()}" for a in reply.actions if a.note.strip()]
    return "\n".join(lines)


# --------------------------------------------------------------------------- protocol (C)


async def _embed(embedder: Any, ctx: _Ctx, texts: list[str]) -> tuple[Any, str]:
    """Embed the candidates; an endpoint embedder's call is recorded in the session record."""
    import numpy as np

    from curiosity_tui.protocol.embedders import EndpointEmbedder, TfidfEmbedder, l2_normalise

    emb = embedder or TfidfEmbedder()
    if isinstance(emb, EndpointEmbedder):
        vectors = await ctx.call(
            emb.client.embed(list(texts), session=ctx.t, model=emb.model), key="embeddings"
        )
        return l2_normalise(np.asarray(vectors, dtype=np.float64)), emb.name
    return await asyncio.to_thread(emb.embed, texts), str(emb.name)


async def _run_protocol(
    ctx: _Ctx, meta: RunMeta, embedder: Any, previous_focus: str | None
) -> None:
    st = ctx.settings
    led = ctx.led
    nodes = led.raw_nodes()
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
        raise SessionFailure(ctx.t, "no open question to focus on", ctx.record)
    ctx.record.focus = focus
    fnode = nodes[focus]
    question = fnode["text"]
    facts6 = focus_facts(fnode)

    # -- step 2: independent calls at once ------------------------------------------------
    cand_msgs = prompts.candidate_messages(question, facts6)
    jb_msgs = prompts.judge_before_messages(question, facts6)
    rc = fnode.get("return_condition")
    to_check: list[dict[str, Any]] = []
    if not st.contract.checks_in_deliverable and rc:
        to_check = [
            r for r in rc["required_facts"] if r["status"] in ("unchecked", "not_satisfied")
        ]
    reserve = 3 * st.candidate_cap + 2 * st.judge_cap + st.deliverable_min
    room = max(0, (st.session_budget - reserve) // st.checker_cap)
    if len(to_check) > room:
        ctx.rejected.append(f"budget: {len(to_check) - room} check(s) not run this session")
        to_check = to_check[:room]
    passages = await _retrieve(led, to_check, st.retrieval_k) if to_check else {}

    cand_calls = [
        ctx.call(
            ctx.client.complete(
                kind="candidate",
                session=ctx.t,
                messages=cand_msgs,
                max_tokens=st.candidate_cap,
                internal=True,
            ),
            key=f"candidate-{i}",
        )
        for i in (1, 2, 3)
    ]
    jb_call = ctx.call(
        ctx.client.structured(
            kind="judge-before",
            session=ctx.t,
            messages=jb_msgs,
            schema=JudgeBeforeResponse,
            max_tokens=st.judge_cap,
            internal=True,
        ),
        key="judge-before",
    )
    check_calls = [
        ctx.call(
            ctx.client.structured(
                kind="checker",
                session=ctx.t,
                messages=prompts.checker_messages(
                    question,
                    r["id"],
                    r["text"],
                    st.contract.checker_instruction,
                    passages.get(r["id"], []),
                ),
                schema=CheckerResponse,
                max_tokens=st.checker_cap,
                internal=True,
            ),
            key=f"checker-{r['id']}",
        )
        for r in to_check
    ]
    results = await asyncio.gather(*cand_calls, jb_call, *check_calls)
    candidates: list[str] = [str(c) for c in results[:3]]
    before: JudgeBeforeResponse = results[3]  # type: ignore[assignment]
    checks: list[CheckerResponse] = list(results[4:])  # type: ignore[arg-type]

    # -- step 3: medoid, judge-after, tension -----------------------------------------------
    from curiosity_tui.protocol.embedders import cosine_matrix, medoid_index

    vectors, emb_name = await _embed(embedder, ctx, candidates)
    sims = cosine_matrix(vectors, vectors)
    medoid = int(medoid_index(vectors))
    selected = candidates[medoid]
    d_value = disagreement([[float(x) for x in row] for row in sims])
    after: JudgeAfterResponse = await ctx.call(
        ctx.client.structured(
            kind="judge-after",
            session=ctx.t,
            messages=prompts.judge_after_messages(question, before, selected),
            schema=JudgeAfterResponse,
            max_tokens=st.judge_cap,
            internal=True,
            validator=judge_after_pairing(before),
        ),
        key="judge-after",
    )
    f_before, u_before = len(before.framings), len(before.dependencies)
    f_after = sum(1 for j in after.framings if j.verdict == "viable")
    u_after = sum(1 for j in after.dependencies if j.verdict == "viable")
    t_before = tension(d_value, f_before, u_before)
    t_after = tension(d_value, f_after, u_after)
    dlt = delta(t_before, t_after)
    decision = decide(dlt, st.epsilon)
    rec = ctx.record
    rec.tension_before, rec.tension_after, rec.delta, rec.decision = (
        t_before,
        t_after,
        dlt,
        decision,
    )
    rec.embedder, rec.medoid = emb_name, medoid
    rec.tension = TensionTerms(
        D=d_value,
        F_before=f_before,
        U_before=u_before,
        F_after=f_after,
        U_after=u_after,
        candidates=candidates,
        similarities=[[float(x) for x in row] for row in sims],
        embedder=emb_name,
    )

    # -- step 5: the deliverable -----------------------------------------------------------
    check_summary = "\n".join(
        f"- {r['id']}: {'satisfied (claimed)' if c.satisfied else 'not satisfied'}"
        for r, c in zip(to_check, checks, strict=True)
    )
    reqs = [
        (r["id"], r["text"])
        for r in (rc["required_facts"] if rc else [])
        if r["status"] != "waived"
    ]
    left = ctx.budget.left
    if left < st.deliverable_min:
        raise SessionFailure(
            ctx.t, f"session budget exhausted before the deliverable ({left} tokens left)", rec
        )
    deliv: DeliverableResponse = await ctx.call(
        ctx.client.structured(
            kind="deliverable",
            session=ctx.t,
            messages=prompts.deliverable_messages(
                seed=meta.seed,
                rendering=rendering,
                focus_id=focus,
                focus_text=question,
                decision=decision,
                candidate=selected,
                open_layer_min=st.open_layer_min,
                checks_in_deliverable=st.contract.checks_in_deliverable,
                checker_instruction=st.contract.checker_instruction,
                required_facts=reqs,
                check_summary=check_summary,
            ),
            schema=DeliverableResponse,
            max_tokens=left,
            internal=False,
            validator=open_layer_bounds(st.open_layer_min),
        ),
        key="deliverable",
    )
    last = rec.calls[-1]
    if last.finish_reason == "length":
        raise SessionFailure(ctx.t, "the deliverable was truncated (finish_reason length)", rec)

    # -- step 6: apply as one unit -----------------------------------------------------------
    with led.batch(ctx.t) as b:
        b.emit("session_started", None, "system", {"focus": focus, "config": st.config.name})
        resurface(b, focus, "forced_focus", "system")
        n_checks = 0
        for r, c in zip(to_check, checks, strict=True):
            record_check(
                b,
                st.contract,
                focus,
                r["id"],
                satisfied=c.satisfied,
                evidence_text=c.evidence,
                source_id=c.source_id,
                passage=c.passage,
            )
            n_checks += 1
        actions = _apply_actions(b, ctx, deliv.actions, focus=focus)
        n_facts = _apply_facts(b, ctx, deliv.facts)
        if st.contract.checks_in_deliverable:
            current = {
                r["id"]: r
                for r in (b.node(focus).get("return_condition") or {"required_facts": []})[
                    "required_facts"
                ]
            }
            for dc in deliv.checks:
                rid = _req_id(dc.fact_id, focus)
                if rid not in current:
                    ctx.rejected.append(f"check: {focus} has no required fact {dc.fact_id!r}")
                    continue
                record_check(
                    b,
                    st.contract,
                    focus,
                    rid,
                    satisfied=dc.satisfied,
                    evidence_text=dc.evidence,
                    source_id=dc.source_id,
                    passage=dc.passage,
                )
                n_checks += 1
        more = _new_questions(
            b, ctx, deliv.new_questions, origin="new_question", default_parent=focus
        )
        living = _new_questions(
            b, ctx, deliv.open_layer.living_questions, origin="open_layer", default_parent=focus
        )
        if decision == "PRESERVE":
            b.emit(
                "candidate_preserved",
                focus,
                "model",
                {"text": selected, "delta": dlt, "reason": "preserve"},
            )
            _apply_return_condition(b, focus, deliv.open_layer.return_condition)
        else:
            answer = (deliv.answer or "").strip() or selected
            out = attempt_closure(b, st.contract, focus, answer=answer, delta=dlt)
            rec.closure = SessionClosure(closed=out.closed, unmet=list(out.unmet))
        if st.contract.downgrades_allowed:
            for p in deliv.downgrade_proposals:
                nid = _existing(b, ctx, p.node, "downgrade proposal")
                if nid is None:
                    continue
                try:
                    propose_in_batch(
                        b,
                        nid,
                        _req_id(p.fact_id, nid),
                        p.proposal,
                        grounds=p.grounds,
                        actor="model",
                        new_text=p.new_text,
                    )
                except TransitionError as err:
                    ctx.rejected.append(f"downgrade proposal: {err}")
        rec.questions = living + more
        rec.counts = SessionCounts(
            voluntary_actions=actions,
            new_questions=len(more),
            open_layer=len(living),
            dependency_checks=n_checks,
            facts=n_facts,
            forced_focus=True,
        )
        rec.output_text = _deliverable_text(deliv, decision)
        _finish(b, ctx, decay=True)


def _req_id(raw: str, node: str) -> str:
    """Accept 'r2', 'R2', 'q1.r2', 'q1/r2' for requirement r2 of ``node``."""
    v = raw.strip().lower()
    for sep in (".", "/", ":"):
        if sep in v:
            v = v.rsplit(sep, 1)[1]
    return v


def _apply_return_condition(b: Batch, node_id: str, proposal: Any) -> None:
    if proposal is None:
        return
    n = b.node(node_id)
    texts = [t.strip() for t in proposal.required_facts if t.strip()]
    rc = n.get("return_condition")
    if rc is None:
        counter = n["requirement_counter"]
        rfs = [
            {"id": f"r{counter + i}", "text": t, "status": "unchecked", "checked": None}
            for i, t in enumerate(texts, 1)
        ]
        b.emit(
            "return_condition_set",
            node_id,
            "model",
            {
                "required_facts": rfs,
                "required_actions": list(proposal.required_actions),
                "closure_test": proposal.closure_test,
            },
        )
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
    b.emit(
        "return_condition_revised",
        node_id,
        "model",
        {
            "required_facts": rev.required_facts,
            "required_actions": rev.required_actions,
            "closure_test": rev.closure_test,
            "carried": rev.carried,
            "retired": rev.retired,
            "added": rev.added,
        },
    )


def _deliverable_text(d: DeliverableResponse, decision: str) -> str:
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


async def _retrieve(
    led: Ledger, reqs: list[dict[str, Any]], k: int
) -> dict[str, list[tuple[str, str]]]:
    if not led.sources():
        return {}
    from curiosity_tui.contract.retrieval import retrieve

    return await asyncio.to_thread(retrieve, led, [(r["id"], r["text"]) for r in reqs], k)


def session_wall_time(record: SessionRecord) -> float:
    """Seconds between start and finish of a session record (0 if unknown)."""
    from datetime import datetime

    try:
        a = datetime.strptime(record.started, "%Y-%m-%dT%H:%M:%S.%fZ")
        b = datetime.strptime(record.finished, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return 0.0
    return (b - a).total_seconds()
