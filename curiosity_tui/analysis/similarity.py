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

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curiosity_tui.analysis.registry import register
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.blas import one_blas_thread
from curiosity_tui.errors import InputError
from curiosity_tui.modelio.embedders import Embedder, TfidfEmbedder, l2_normalise

if TYPE_CHECKING:
    from typing import TypeAlias

    from scipy import sparse

    Vectors: TypeAlias = np.ndarray | sparse.csr_matrix

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
    vecs: Vectors = (
        embedder.embed_sparse(texts)  # kept sparse; densified a tile at a time
        if isinstance(embedder, TfidfEmbedder)
        else np.asarray(embedder.embed(texts))
    )
    with one_blas_thread():
        return list(_earlier_maxima(vecs, sessions))


#: at most BLOCK questions per tile, and at most CELLS numbers in a tile's dense vectors:
#: memory stays bounded whatever the number of questions and the vectors' width
BLOCK = 1024
CELLS = 1 << 22


def _blocks(first: np.ndarray, size: int) -> Iterator[tuple[int, int, int]]:
    """``(lo, hi, width)``: ``size`` rows from lo against the first ``width`` questions (the
    longest earlier prefix among them); rows without earlier questions are skipped."""
    lo = int(np.searchsorted(first, 0, side="right"))  # ``first`` is non-decreasing
    while lo < len(first):
        hi = min(lo + size, len(first))
        yield lo, hi, int(first[hi - 1])
        lo = hi


def _dense(vecs: Vectors, lo: int, hi: int) -> np.ndarray:
    """Rows lo..hi-1 as dense unit rows (TF-IDF rows: what ``embed`` returns for them)."""
    part = vecs[lo:hi]
    return l2_normalise(part.toarray()) if hasattr(part, "toarray") else np.asarray(part)


def _earlier_maxima(
    vecs: Vectors, sessions: np.ndarray, block: int = BLOCK
) -> Iterator[tuple[int, float]]:
    """Each question's max cosine against the questions of earlier sessions, tile by tile.

    ``sessions`` is sorted, so question i's earlier questions are the prefix before the
    first question of its session; a row block multiplies only against the longest such
    prefix, in column tiles, keeping each row's running maximum.
    """
    first = np.searchsorted(sessions, sessions, side="left")
    rows, cols = vecs.shape
    if hasattr(vecs, "toarray") and rows * cols <= CELLS:  # small enough: densify once
        vecs = _dense(vecs, 0, rows)
    size = max(1, min(block, CELLS // max(1, cols)))
    for lo, hi, width in _blocks(first, size):
        left = _dense(vecs, lo, hi)
        best = np.full(hi - lo, -np.inf)
        for c0 in range(0, width, size):
            c1 = min(c0 + size, width)
            sims = left @ _dense(vecs, c0, c1).T
            sims[np.arange(c0, c1)[None, :] >= first[lo:hi, None]] = -np.inf
            np.maximum(best, sims.max(axis=1), out=best)
        best = np.clip(best, -1.0, 1.0)
        yield from zip(sessions[lo:hi].tolist(), best.tolist(), strict=True)


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


# ------------------------------------------------------------------ reference points (§4)


class ReferenceItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    #: this question's own comparison set; falls back to the file's shared ``against``
    against: list[str] = Field(default_factory=list)
    run: str = ""


class ReferenceSet(BaseModel):
    """A user-supplied question set for one reference point (JSON file).

    ``{"name": "ceiling", "description": "questions vs their own paraphrases",
    "items": [{"question": "...", "against": ["paraphrase 1", ...], "run": "r0"}]}``;
    floors may give one shared ``"against": [...]`` for every item instead.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    against: list[str] = Field(default_factory=list)
    items: list[ReferenceItem] = Field(min_length=1)


class ReferencePoint(BaseModel):
    """One row of the §4 reference table: max-cosine per question, mean and sd over questions."""

    name: str
    description: str
    embedder: str
    mean: float | None
    sd: float | None  # sample sd (ddof = 1) over questions, not over independent units
    questions: int
    runs: int
    comparisons: int  # texts compared against, in total
    source: str = ""


def _point(
    name: str,
    description: str,
    embedder: Embedder,
    maxima: Sequence[float],
    runs: int,
    comparisons: int,
    source: str,
) -> ReferencePoint:
    arr = np.asarray(maxima, dtype=float)
    return ReferencePoint(
        name=name,
        description=description,
        embedder=embedder.name,
        mean=float(arr.mean()) if arr.size else None,
        sd=float(arr.std(ddof=1)) if arr.size > 1 else None,
        questions=int(arr.size),
        runs=runs,
        comparisons=comparisons,
        source=source,
    )


def load_reference_set(path: Path) -> ReferenceSet:
    try:
        data = ReferenceSet.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"{path}: cannot read reference set: {err.strerror}") from err
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(f"{path}: not a reference set: {where}: {first['msg']}") from err
    for i, item in enumerate(data.items):
        if not (item.against or data.against):
            raise InputError(f"{path}: items.{i}: no comparison set (item or file 'against')")
    return data


def reference_point(
    ref: ReferenceSet, embedder: Embedder | None = None, *, source: str = ""
) -> ReferencePoint:
    """Each item's max cosine against its comparison set; every text embedded in one call."""
    emb = embedder or DEFAULT_EMBEDDER
    texts: list[str] = list(ref.against)
    spans: list[tuple[int, int, int]] = []  # (question index, against start, against end)
    for item in ref.items:
        q = len(texts)
        texts.append(item.question)
        if item.against:
            start = len(texts)
            texts.extend(item.against)
            spans.append((q, start, len(texts)))
        else:
            spans.append((q, 0, len(ref.against)))
    vecs = emb.embed(texts)
    with one_blas_thread():
        maxima = [float(np.max(vecs[a:b] @ vecs[q])) for q, a, b in spans]
    comparisons = sum(b - a for _, a, b in spans)
    runs = len({item.run for item in ref.items if item.run})
    return _point(ref.name, ref.description, emb, maxima, runs, comparisons, source)


def measured_point(
    runs: Sequence[RunData], *, name: str = "measured", embedder: Embedder | None = None
) -> ReferencePoint:
    """The runs' own questions vs their earlier sessions, pooled over questions (§4 row 2)."""
    emb = embedder or DEFAULT_EMBEDDER
    maxima: list[float] = []
    comparisons = 0
    for r in runs:
        got = (
            _run_maxima(r)
            if emb is DEFAULT_EMBEDDER
            else tuple(question_maxima(r.questions_by_session(), emb))
        )
        maxima.extend(m for _, m in got)
        by = r.questions_by_session()
        for s, _ in got:
            comparisons += sum(len(qs) for t, qs in by.items() if t < s)
    return _point(
        name,
        "questions vs the questions of the same run's earlier sessions",
        emb,
        maxima,
        len(runs),
        comparisons,
        "runs",
    )


def format_reference_table(points: Sequence[ReferencePoint]) -> str:
    lines = [
        "| point | mean | sd | questions / runs | embedder |",
        "|---|---|---|---|---|",
    ]
    for p in points:
        mean = "—" if p.mean is None else f"{p.mean:.2f}"
        sd = "—" if p.sd is None else f"{p.sd:.2f}"
        label = f"{p.name} — {p.description}" if p.description else p.name
        lines.append(f"| {label} | {mean} | {sd} | {p.questions} / {p.runs} | {p.embedder} |")
    lines.append(
        "sd is over questions, which are nested within runs: it describes the spread of "
        "questions, not of independent units; the run count carries the uncertainty."
    )
    return "\n".join(lines)
