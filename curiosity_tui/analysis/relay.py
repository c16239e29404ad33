"""Drift and survival across a relay's handovers (issue 15; docs/protocol.md §Relay).

For each committed session t of a run, with S(t) the root question's signature after session t
(:mod:`curiosity_tui.analysis.signature`; S(0): before session 1) and H(t) the signature of the
state session t was handed (S(t - 1), or the curator's snapshot when a curator acted between
the sessions: the curator's changes enter neither drift, decision 223):

* **drift at session t** = 1 - cosine(H(t), S(t)) (:func:`pair_drift`: the pair embedded in a
  call of its own, so drift depends on the two states alone and the step and total drifts of
  one pair agree; undefined, with its reason, when a signature is empty: arms A and B have no
  root question; decision 421);
* **survival at session t** = of the required facts and living questions in H(t), the
  share still in S(t), each either by id or by similarity: its text has cosine >=
  :data:`SURVIVAL_THRESHOLD` with an item of the same kind in S(t) (a required fact counts
  against required facts, a living question against living questions);
* the **transition** into session t: the kinds of mind of sessions t - 1 and t — same model
  (same model name at the same endpoint), other model, model -> human, human -> model (and
  human -> human). A session record without a mind (a run that is not a relay) was taken by
  the run's model: its transitions are all "same model", the single-mind baseline.

Registry metrics (group ``relay``) use the offline default embedder and name it, as the other
similarity figures do; :func:`handovers` takes any embedder (the tables, the tests' fixed one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from curiosity_tui.analysis.registry import register
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.analysis.signature import QuestionSignature, SignatureItem
from curiosity_tui.analysis.similarity import DEFAULT_EMBEDDER
from curiosity_tui.blas import one_blas_thread
from curiosity_tui.ledger.models import Mind
from curiosity_tui.modelio.embedders import Embedder

SURVIVAL_THRESHOLD = 0.80
TRANSITIONS = ("same_model", "other_model", "model_to_human", "human_to_model")
_WORDS = {
    "same_model": "same model",
    "other_model": "other model",
    "model_to_human": "model -> human",
    "human_to_model": "human -> model",
    "human_to_human": "human -> human",
    "first": "first session",
}


@dataclass(frozen=True)
class Handover:
    """Session ``session`` of a run, against the state it began from."""

    session: int
    mind: str  # "model:<name>@<endpoint>" or "human:<name>"
    transition: str  # one of TRANSITIONS, "human_to_human", or "first" (session 1)
    focus: str | None
    drift: float | None  # None: undefined, and drift_undefined says why
    survived: int
    survived_by_id: int
    carried: int  # items (required facts + living questions) present before the session
    drift_undefined: str | None = None

    @property
    def survival(self) -> float | None:
        return self.survived / self.carried if self.carried else None


def transition_words(kind: str) -> str:
    return _WORDS.get(kind, kind)


def _mind(session: Any, run: RunData) -> tuple[str, str, str | None]:
    m = getattr(session, "mind", None)
    if isinstance(m, Mind):
        return m.kind, m.name, m.endpoint
    return "model", str(run.meta.get("model") or ""), None


def mind_label(kind: str, name: str, endpoint: str | None) -> str:
    return f"{kind}:{name}" + (f"@{endpoint}" if endpoint else "")


def transition(before: tuple[str, str, str | None], after: tuple[str, str, str | None]) -> str:
    if before[0] == "model" and after[0] == "model":
        return "same_model" if before[1:] == after[1:] else "other_model"
    return f"{before[0]}_to_{after[0]}"


def _survivors(
    items: Sequence[SignatureItem], after: Sequence[SignatureItem], sims: np.ndarray
) -> tuple[int, int]:
    """(survived, survived by id) of ``items``; ``sims[i, j]``: item i vs after item j."""
    ids = {a.id for a in after}
    by_id = sum(1 for it in items if it.id in ids)
    by_sim = 0
    for i, it in enumerate(items):
        if it.id not in ids and sims.shape[1] and float(sims[i].max()) >= SURVIVAL_THRESHOLD:
            by_sim += 1
    return by_id + by_sim, by_id


def pair_drift(
    before: QuestionSignature, after: QuestionSignature, embedder: Embedder | None = None
) -> tuple[float | None, str | None]:
    """(1 - cosine of the two signatures' texts, None), or (None, why it is undefined).

    The one definition of drift (decision 421): the two texts are embedded in one call of
    their own, so the figure depends on the pair of states alone; a step drift and a total
    drift over the same pair are the same number."""
    reason = before.undefined_reason() or after.undefined_reason()
    if reason is not None:
        return None, reason
    vecs = np.asarray((embedder or DEFAULT_EMBEDDER).embed([before.as_text(), after.as_text()]))
    if not (np.any(vecs[0]) and np.any(vecs[1])):
        return None, "the embedder gives a signature no vector (all zero)"
    with one_blas_thread():
        return float(1.0 - np.clip(vecs[0] @ vecs[1], -1.0, 1.0)), None


def handovers(run: RunData, embedder: Embedder | None = None) -> list[Handover]:
    """One :class:`Handover` per committed session that has a signature (empty: none)."""
    emb = embedder or DEFAULT_EMBEDDER
    sigs = sorted(run.signatures, key=lambda s: s.session)
    if len(sigs) < 2:
        return []
    handed = {s.session: s for s in run.handed}
    sessions = {s.session: s for s in run.committed_sessions()}
    out: list[Handover] = []
    for k in range(1, len(sigs)):
        before = handed.get(sigs[k].session, sigs[k - 1])
        out.append(_handover(run, before, sigs[k], sigs[k - 1].session, emb, sessions))
    return out


def _carried(
    before: QuestionSignature, after: QuestionSignature, emb: Embedder
) -> tuple[tuple[int, int], tuple[int, int]]:
    """(survived, by id) of the required facts and of the living questions handed over,
    their texts embedded in one call of the handover's own."""
    groups = (before.required_facts, after.required_facts, before.living, after.living)
    texts = [it.text for g in groups for it in g]
    if not texts:
        return (0, 0), (0, 0)
    vecs = np.asarray(emb.embed(texts))
    bounds = np.cumsum([0, *(len(g) for g in groups)])
    part = [vecs[bounds[i] : bounds[i + 1]] for i in range(4)]
    with one_blas_thread():
        facts = _survivors(groups[0], groups[1], part[0] @ part[1].T)
        living = _survivors(groups[2], groups[3], part[2] @ part[3].T)
    return facts, living


def _handover(
    run: RunData,
    before: QuestionSignature,
    after: QuestionSignature,
    prev_session: int,
    emb: Embedder,
    sessions: dict[int, Any],
) -> Handover:
    """Session ``after.session`` against ``before``: the state it was handed (after any
    curator; decision 223), or S(0) for session 1."""
    facts, living = _carried(before, after, emb)
    drift, why = pair_drift(before, after, emb)
    rec = sessions.get(after.session)
    prev = sessions.get(prev_session)
    here = _mind(rec, run)
    kind = "first" if prev is None else transition(_mind(prev, run), here)
    return Handover(
        session=after.session,
        mind=mind_label(*here),
        transition=kind,
        focus=getattr(rec, "focus", None),
        drift=drift,
        drift_undefined=why,
        survived=facts[0] + living[0],
        survived_by_id=facts[1] + living[1],
        carried=len(before.required_facts) + len(before.living),
    )


def drift_total(run: RunData, embedder: Embedder | None = None) -> float | None:
    """1 - cosine between the signature after session 1 and after the last session
    (:func:`pair_drift`; None when undefined)."""
    sigs = sorted((s for s in run.signatures if s.session >= 1), key=lambda s: s.session)
    if len(sigs) < 2:
        return None
    return pair_drift(sigs[0], sigs[-1], embedder)[0]


# ----------------------------------------------------------------- registry (offline embedder)


def _key(run: RunData) -> str:
    minds = [(s.session, str(getattr(s, "mind", None))) for s in run.committed_sessions()]
    sigs = [s.model_dump_json() for s in (*run.signatures, *run.handed)]
    return repr((run.meta.get("model"), minds, sigs, len(run.handed)))


_CACHE: dict[str, tuple[tuple[Handover, ...], float | None]] = {}


def _of(run: RunData) -> tuple[tuple[Handover, ...], float | None]:
    """A run's handovers and total drift, computed once per run content."""
    key = _key(run)  # the signatures handed after a curator are part of it
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) >= 1024:
            _CACHE.clear()
        hit = _CACHE[key] = (tuple(handovers(run)), drift_total(run))
    return hit


def _mean(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return float(np.mean(xs)) if xs else None


def step_drift(run: RunData, kind: str | None = None) -> float | None:
    hs = [h for h in _of(run)[0] if h.transition != "first"]
    return _mean([h.drift for h in hs if kind is None or h.transition == kind])


def survival_share(run: RunData, kind: str | None = None) -> float | None:
    hs = [h for h in _of(run)[0] if h.transition != "first"]
    return _mean([h.survival for h in hs if kind is None or h.transition == kind])


_EMB = DEFAULT_EMBEDDER.name
_DRIFT_DEF = (
    "at each handover (session t >= 2), 1 - cosine between the root question's signature as "
    "handed to session t (after any curator: curator changes are in neither drift) and after "
    "session t (its text, the required facts, required actions and closure tests of its and "
    "its living questions' return conditions, and its living questions; the two texts "
    "embedded together, alone); averaged over the run's handovers; undefined for a run "
    "without a root question (arms A and B)"
)
_SURV_DEF = (
    "at each handover (session t >= 2), of the required facts and living questions in the "
    "signature handed to session t, the share still there after it, by id or by a text with "
    f"cosine >= {SURVIVAL_THRESHOLD:.2f} against an item of the same kind; averaged over the "
    "run's handovers that carried any"
)


@register(
    "relay_drift_step_mean",
    definition=_DRIFT_DEF,
    unit=f"1 - cosine ({_EMB})",
    denominator="handovers of the run; mean over runs",
    higher_is_better=False,
    group="relay",
    embedder=_EMB,
)
def relay_drift_step_mean(run: RunData) -> float | None:
    return step_drift(run)


@register(
    "relay_drift_total",
    definition="1 - cosine between the root question's signature after session 1 and after "
    "the run's last session (the same pairwise definition as the step drift; it spans the "
    "run, so curator changes between sessions are in it); undefined for a run without a "
    "root question",
    unit=f"1 - cosine ({_EMB})",
    denominator="per run (two or more sessions); mean over runs",
    higher_is_better=False,
    group="relay",
    embedder=_EMB,
)
def relay_drift_total(run: RunData) -> float | None:
    return _of(run)[1]


@register(
    "relay_survival_share",
    definition=_SURV_DEF,
    unit=f"share ({_EMB})",
    denominator="handovers that carried items; mean over runs",
    higher_is_better=True,
    group="relay",
    embedder=_EMB,
)
def relay_survival_share(run: RunData) -> float | None:
    return survival_share(run)


def _register_split(kind: str) -> None:
    words = transition_words(kind)

    def drift(run: RunData) -> float | None:
        return step_drift(run, kind)

    def survival(run: RunData) -> float | None:
        return survival_share(run, kind)

    register(
        f"relay_drift_step_mean_{kind}",
        definition=f"relay_drift_step_mean over the handovers whose transition is {words}",
        unit=f"1 - cosine ({_EMB})",
        denominator=f"{words} handovers of the run; mean over runs with one",
        higher_is_better=False,
        group="relay",
        embedder=_EMB,
    )(drift)
    register(
        f"relay_survival_share_{kind}",
        definition=f"relay_survival_share over the handovers whose transition is {words}",
        unit=f"share ({_EMB})",
        denominator=f"{words} handovers that carried items; mean over runs with one",
        higher_is_better=True,
        group="relay",
        embedder=_EMB,
    )(survival)


for _kind in TRANSITIONS:
    _register_split(_kind)
