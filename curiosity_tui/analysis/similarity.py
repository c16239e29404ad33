"""Re-asking metrics (report §3, §4 "The similarity measure"): regen_mean, regen_dup_share.

For each question a session raises, its maximum cosine against the questions of the
same run's earlier sessions; ``regen_mean`` averages those maxima over the run's
questions, ``regen_dup_share`` is the share of questions whose maximum reaches 0.80 —
a share of questions, not of pairs — averaged over sessions within the run, then over
runs (the report's usual rule; :func:`pooled_dup_share` gives the pooled variant).
Questions of the first session with questions have no comparison set and are not
counted. The registry entries use the offline default embedder and carry its name;
every figure computed from them names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.registry import register
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.protocol.embedders import Embedder, TfidfEmbedder

DUP_THRESHOLD = 0.80

#: the registry's embedder: offline, deterministic, no network
DEFAULT_EMBEDDER: Embedder = TfidfEmbedder()

SessionQuestions = tuple[tuple[int, tuple[str, ...]], ...]


def question_maxima(
    by_session: dict[int, list[str]] | SessionQuestions, embedder: Embedder
) -> list[tuple[int, float]]:
    """``(session, max cosine against earlier sessions' questions)`` per counted question.

    All of the run's questions are embedded in one call, so the vectors are comparable.
    """
    items = sorted(by_session.items() if isinstance(by_session, dict) else by_session)
    texts = [q for _, qs in items for q in qs]
    if not texts:
        return []
    sessions = np.array([s for s, qs in items for _ in qs])
    vecs = embedder.embed(texts)
    sims = np.clip(vecs @ vecs.T, -1.0, 1.0)
    earlier = sessions[None, :] < sessions[:, None]  # [i, j]: j raised before i's session
    out: list[tuple[int, float]] = []
    for i in range(len(texts)):
        row = earlier[i]
        if row.any():
            out.append((int(sessions[i]), float(sims[i, row].max())))
    return out


@lru_cache(maxsize=4096)
def _cached_maxima(key: SessionQuestions, embedder_name: str) -> tuple[tuple[int, float], ...]:
    if embedder_name != DEFAULT_EMBEDDER.name:  # pragma: no cover - cache is per default
        raise ValueError(embedder_name)
    return tuple(question_maxima(key, DEFAULT_EMBEDDER))


def _run_maxima(run: RunData) -> tuple[tuple[int, float], ...]:
    key: SessionQuestions = tuple(
        (s, tuple(qs)) for s, qs in sorted(run.questions_by_session().items()) if qs
    )
    return _cached_maxima(key, DEFAULT_EMBEDDER.name)


def regen_mean_of(maxima: Sequence[tuple[int, float]]) -> float | None:
    return float(np.mean([m for _, m in maxima])) if maxima else None


def dup_share_of(
    maxima: Sequence[tuple[int, float]], threshold: float = DUP_THRESHOLD
) -> float | None:
    """Session shares of questions with max >= threshold, averaged over sessions."""
    by: dict[int, list[float]] = {}
    for s, m in maxima:
        by.setdefault(s, []).append(m)
    if not by:
        return None
    return float(np.mean([np.mean([m >= threshold for m in ms]) for ms in by.values()]))


class PooledShare(BaseModel):
    embedder: str
    threshold: float
    duplicates: int
    questions: int
    share: float | None


def pooled_dup_share(
    runs: Iterable[RunData], embedder: Embedder | None = None, threshold: float = DUP_THRESHOLD
) -> PooledShare:
    """The pooled variant: duplicates over all counted questions of all runs (e.g. 7/39)."""
    emb = embedder or DEFAULT_EMBEDDER
    dup = n = 0
    for r in runs:
        maxima = (
            _run_maxima(r)
            if emb is DEFAULT_EMBEDDER
            else tuple(question_maxima(r.questions_by_session(), emb))
        )
        n += len(maxima)
        dup += sum(1 for _, m in maxima if m >= threshold)
    return PooledShare(
        embedder=emb.name,
        threshold=threshold,
        duplicates=dup,
        questions=n,
        share=(dup / n if n else None),
    )


@register(
    "regen_mean",
    definition="for each question a session raises, its maximum similarity against the "
    "questions of that run's earlier sessions; regen_mean averages those maxima",
    unit=f"cosine ({DEFAULT_EMBEDDER.name})",
    denominator="questions of sessions with earlier questions, pooled within the run; "
    "mean over runs",
    higher_is_better=False,
    group="similarity",
    embedder=DEFAULT_EMBEDDER.name,
)
def regen_mean(run: RunData) -> float | None:
    return regen_mean_of(_run_maxima(run))


@register(
    "regen_dup_share",
    definition="the share of questions whose maximum similarity against the run's earlier "
    "questions reaches 0.80 — not a share of pairs",
    unit=f"share ({DEFAULT_EMBEDDER.name})",
    denominator="session shares averaged within the run, then over runs "
    "(pooled variant: pooled_dup_share)",
    higher_is_better=False,
    group="similarity",
    embedder=DEFAULT_EMBEDDER.name,
)
def regen_dup_share(run: RunData) -> float | None:
    return dup_share_of(_run_maxima(run))
