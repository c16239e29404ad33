"""Steps 2b and 3 of the protocol package: the tension evaluation and the decision (S5; report
§2, §3), under the run's tension setting (issue 26 items 4, 5; ``tension_options.py``).

:func:`judges_step` selects the medoid, asks the judge-after about it (and, with Δ per
candidate, about every candidate), and computes tension before and after and Δ by the run's
measure. :func:`decision_step` applies PRESERVE iff Δ < −ε, with Δ per candidate and the
fallback, and answers in service sessions. With the default setting both do exactly what the
pilot did and record exactly what it recorded.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from curiosity_tui.ledger.models import TensionTerms
from curiosity_tui.ledger.tension_record import CandidateDelta, DecisionBasis
from curiosity_tui.protocol import prompts
from curiosity_tui.protocol.call_specs import judge_after_spec, judge_relist_spec
from curiosity_tui.protocol.context import SessionContext
from curiosity_tui.protocol.schemas import JudgeAfterResponse, JudgeRelistResponse
from curiosity_tui.protocol.tension import Decision, decide, delta, disagreement, tension
from curiosity_tui.protocol.tension_measures import (
    cluster_entropy,
    cluster_labels,
    disagreement_among,
    four_tension,
    standing,
)


@dataclass(frozen=True)
class Evaluation:
    """The tension evaluation: the candidate delivered or withheld, its Δ and index (the medoid
    unless Δ per candidate chose another), and every evaluated candidate's Δ."""

    selected: str
    delta: float
    index: int = 0
    deltas: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class _After:
    """One candidate's after-side as the judge-after gave it."""

    index: int
    f: int
    u: int
    follow_ups: tuple[str, ...] = ()
    d_after: float | None = None  # pre-amendment: D over the follow-up questions


@dataclass(frozen=True)
class _Before:
    """The before-side of the session: the candidates' D, clusters and the judge-before."""

    d: float
    f: int
    u: int
    sims: list[list[float]]
    labels: list[int]


async def judges_step(ctx: SessionContext, focus: Any, first: Any, embedder: Any) -> Evaluation:
    """Medoid of the candidates, the judge-after on it (and on the others with Δ per
    candidate), tension before/after and Δ by the run's measure."""
    from curiosity_tui.modelio.embedders import cosine_matrix, medoid_index

    opts = ctx.settings.tension
    vectors, emb_name = await _embed(embedder, ctx, first.candidates, "embeddings")
    sims = [[float(x) for x in row] for row in cosine_matrix(vectors, vectors)]
    medoid = int(medoid_index(vectors))
    others = [i for i in range(len(first.candidates)) if i != medoid and opts.per_candidate]
    afters = await asyncio.gather(
        *(_judge_after(ctx, focus, first, embedder, i, i == medoid) for i in [medoid, *others])
    )
    labels = cluster_labels(sims, opts.cluster_similarity)
    before = _Before(
        disagreement(sims), len(first.before.framings), len(first.before.dependencies), sims, labels
    )
    t_before = _tension_before(ctx, before)
    scored = [(a, *_tension_after(ctx, before, a)) for a in afters]
    m, m_after, _ = scored[0]
    dlt = delta(t_before, m_after)
    terms = TensionTerms(
        D=before.d,
        F_before=before.f,
        U_before=before.u,
        F_after=m.f,
        U_after=m.u,
        candidates=first.candidates,
        similarities=sims,
        embedder=emb_name,
    )
    if not opts.is_default():  # the pilot as run records what it recorded
        terms = _annotated(ctx, terms, before, scored, t_before)
    rec = ctx.record
    rec.tension_before, rec.tension_after, rec.delta = t_before, m_after, dlt
    rec.embedder, rec.medoid, rec.tension = emb_name, medoid, terms
    deltas = tuple((a.index, delta(t_before, t_a)) for a, t_a, _ in scored)
    return Evaluation(first.candidates[medoid], dlt, medoid, deltas)


async def _judge_after(
    ctx: SessionContext, focus: Any, first: Any, embedder: Any, i: int, is_medoid: bool
) -> _After:
    """The judge-after on candidate ``i`` (the medoid's call keeps the key ``judge-after``)."""
    st = ctx.settings
    key = "judge-after" if is_medoid else f"judge-after-c{i + 1}"
    candidate = first.candidates[i]
    if st.tension.measure == "pre-amendment":
        relist = await ctx.ask(
            judge_relist_spec(),
            kind="judge-after",
            messages=prompts.judge_relist_messages(focus.question, focus.facts, candidate),
            cap=st.judge_cap,
            internal=True,
            key=key,
        )
        assert isinstance(relist, JudgeRelistResponse)
        follow = tuple(relist.follow_ups)
        d_after = 0.0
        if len(follow) >= 2:
            from curiosity_tui.modelio.embedders import cosine_matrix

            vecs, _ = await _embed(embedder, ctx, list(follow), f"embeddings-{key}")
            d_after = disagreement([[float(x) for x in r] for r in cosine_matrix(vecs, vecs)])
        return _After(i, len(relist.framings), len(relist.dependencies), follow, d_after)
    after = await ctx.ask(
        judge_after_spec(first.before),
        kind="judge-after",
        messages=prompts.judge_after_messages(focus.question, first.before, candidate),
        cap=st.judge_cap,
        internal=True,
        key=key,
    )
    assert isinstance(after, JudgeAfterResponse)
    f = sum(1 for j in after.framings if j.verdict == "viable")
    return _After(i, f, sum(1 for j in after.dependencies if j.verdict == "viable"))


def _tension_before(ctx: SessionContext, b: _Before) -> float:
    opts = ctx.settings.tension
    if opts.measure == "four-component":
        h = cluster_entropy(b.labels)
        return four_tension(opts.resolved_weights(), b.d, h, b.f, b.u)
    return tension(b.d, b.f, b.u)


def _tension_after(
    ctx: SessionContext, b: _Before, a: _After
) -> tuple[float, tuple[float | None, float | None]]:
    """(tension after, (D after, H after)) for one candidate, by the run's measure."""
    opts = ctx.settings.tension
    if opts.measure == "pre-amendment":
        d_after = a.d_after or 0.0
        return tension(d_after, a.f, a.u), (d_after, None)
    if opts.measure == "four-component":
        left = standing(b.labels, a.index)
        d_after = disagreement_among(b.sims, left)
        h_after = cluster_entropy([b.labels[i] for i in left], len(b.labels))
        w = opts.resolved_weights()
        return four_tension(w, d_after, h_after, a.f, a.u), (d_after, h_after)
    return tension(b.d, a.f, a.u), (None, None)


def _annotated(
    ctx: SessionContext,
    terms: TensionTerms,
    b: _Before,
    scored: list[tuple[_After, float, tuple[float | None, float | None]]],
    t_before: float,
) -> TensionTerms:
    """The terms with the measure's own components (and Δ per candidate) recorded."""
    opts = ctx.settings.tension
    m, _, (d_after, h_after) = scored[0]
    update: dict[str, Any] = {"measure": opts.measure, "D_after": d_after}
    if opts.measure == "pre-amendment":
        update["follow_ups"] = list(m.follow_ups)
    if opts.measure == "four-component":
        update |= {
            "H_before": cluster_entropy(b.labels),
            "H_after": h_after,
            "clusters": b.labels,
            "cluster_similarity": opts.cluster_similarity,
            "weights": opts.resolved_weights().model_dump(),
        }
    if opts.per_candidate:
        update["per_candidate"] = [
            CandidateDelta(
                index=a.index,
                F_after=a.f,
                U_after=a.u,
                D_after=extra[0],
                H_after=extra[1],
                tension_after=t_a,
                delta=delta(t_before, t_a),
            )
            for a, t_a, extra in sorted(scored, key=lambda s: s[0].index)
        ]
    return terms.model_copy(update=update)


async def _embed(embedder: Any, ctx: SessionContext, texts: list[str], key: str) -> tuple[Any, str]:
    """Embed ``texts``; an endpoint embedder's call is recorded in the session record."""
    import numpy as np

    from curiosity_tui.modelio.embedders import EndpointEmbedder, TfidfEmbedder, l2_normalise

    emb = embedder or TfidfEmbedder()
    if isinstance(emb, EndpointEmbedder):
        vectors = await ctx.call(
            emb.client.embed(list(texts), session=ctx.t, model=emb.model), key=key
        )
        return l2_normalise(np.asarray(vectors, dtype=np.float64)), emb.name
    return await asyncio.to_thread(emb.embed, texts), str(emb.name)


# --------------------------------------------------------------------------- 3. decision


def decision_step(
    ctx: SessionContext, ev: Evaluation, candidates: list[str]
) -> tuple[Decision, Evaluation]:
    """PRESERVE iff Δ < −ε (the medoid's Δ), as run. Δ per candidate: ANSWER with the medoid
    when it meets the threshold, else with the candidate of greatest Δ that does; when none
    does, the fallback: PRESERVE the medoid (decision 533). A service session answers (534).
    Returns the decision and the evaluation of the candidate delivered or withheld."""
    st = ctx.settings
    opts = st.tension
    by_delta = decide(ev.delta, st.epsilon)
    chosen, fallback = ev, False
    if opts.per_candidate and by_delta == "PRESERVE":
        meets = [(d, -i) for i, d in ev.deltas if decide(d, st.epsilon) == "ANSWER"]
        if meets:
            d, neg = max(meets)
            chosen, by_delta = Evaluation(candidates[-neg], d, -neg, ev.deltas), "ANSWER"
        else:
            fallback = True
    kind = opts.kind(ctx.t)
    decision: Decision = by_delta if kind == "research" else "ANSWER"
    ctx.record.decision = decision
    if not opts.is_default():
        ctx.record.decided = DecisionBasis(
            measure=opts.measure,
            kind=kind,
            by_delta=by_delta,
            fallback=fallback,
            candidate=chosen.index,
            delta=chosen.delta,
        )
    return decision, chosen
