"""Attraction, operationalised (report §2; issue 16): a sustained shift of a run's attention
toward one region of its questions.

In words (also in docs/protocol.md, "Attraction"):

- **Regions.** The run's questions (every node of the final snapshot) are grouped by the
  run's embedder with *leader clustering* (method ``leader-v1``): in creation order (session,
  then id number), a question joins the region whose leader is most similar to it when that
  cosine reaches ``threshold`` (a tie goes to the earlier region); otherwise it founds a new
  region and is its leader. The leader is the region's representative question.
- **Attention.** The work of a session is its focus, the nodes its voluntary actions worked,
  and the questions it created; each is one item in the region of its node. A session's
  attention share in a region is its items there over all its items (a session without work
  has no attention).
- **Baseline.** A region's early share: its items over all items in the run's first
  ``early_sessions`` committed sessions, pooled.
- **Attraction** toward a region at session t (after the early sessions): its share at t
  exceeds its early share by at least ``margin``. It is *sustained* over a stretch of at least
  ``min_sessions`` consecutive committed sessions (a session without work ends a stretch), so
  a one-session spike is not attraction.
- ``attraction_sustained_sessions``: the longest sustained stretch (0 when there is none);
  ``attraction_excess_share``: the mean excess over that stretch (undefined when there is
  none). Ties between stretches: the larger mean excess, then the earlier region.

The parameters live in the plan (``[attraction]``) and are locked with it; the registry's
entries use :data:`DEFAULT_PARAMS`, and :func:`with_attraction_params` rebinds them for a plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from curiosity_tui.analysis.registry import REGISTRY, Metric, Registry
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.blas import one_blas_thread
from curiosity_tui.modelio.embedders import Embedder, TfidfEmbedder


class AttractionParams(BaseModel):
    """The attraction parameters a plan locks (``[attraction]`` in PLAN.toml)."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["leader-v1"] = "leader-v1"
    threshold: float = Field(0.4, gt=0.0, le=1.0, allow_inf_nan=False)
    early_sessions: int = Field(2, ge=1, le=100)
    margin: float = Field(0.25, gt=0.0, le=1.0, allow_inf_nan=False)
    min_sessions: int = Field(2, ge=2, le=100)

    def describe(self) -> str:
        return (
            f"{self.method}, cosine >= {self.threshold}, early sessions {self.early_sessions}, "
            f"margin {self.margin}, at least {self.min_sessions} sessions"
        )


DEFAULT_PARAMS = AttractionParams(
    method="leader-v1", threshold=0.4, early_sessions=2, margin=0.25, min_sessions=2
)
DEFAULT_EMBEDDER: Embedder = TfidfEmbedder()


class Region(BaseModel):
    index: int
    leader: str  # node id of the representative question
    representative: str  # its text
    members: list[str]


class Stretch(BaseModel):
    region: int
    sessions: list[int]
    excess: list[float]

    @property
    def mean_excess(self) -> float:
        return float(np.mean(self.excess))


class Attraction(BaseModel):
    """One run's attraction analysis: what the two metrics and the table are read from."""

    params: AttractionParams
    embedder: str
    regions: list[Region]
    early_share: dict[int, float]
    shares: dict[int, dict[int, float]]  # session -> region -> share (sessions with work)
    stretch: Stretch | None

    @property
    def sustained_sessions(self) -> int:
        return len(self.stretch.sessions) if self.stretch else 0

    @property
    def representative(self) -> str | None:
        return self.regions[self.stretch.region].representative if self.stretch else None


def _num(node_id: str) -> int:
    return int(node_id[1:]) if node_id[1:].isdigit() else 0


def leader_regions(
    ids: Sequence[str], texts: Sequence[str], embedder: Embedder, threshold: float
) -> list[Region]:
    """Leader clustering in the given order (see the module's docstring)."""
    if not ids:
        return []
    if embedder is DEFAULT_EMBEDDER:  # both attraction metrics of a run ask for the same
        groups = _default_groups(tuple(ids), tuple(texts), threshold)
    else:
        groups = _leader_groups(ids, texts, embedder, threshold)
    return [
        Region(index=k, leader=ids[i], representative=texts[i], members=[ids[j] for j in m])
        for k, (i, m) in enumerate(groups)
    ]


Groups = tuple[tuple[int, tuple[int, ...]], ...]  # (leader position, member positions)


@lru_cache(maxsize=1024)
def _default_groups(ids: tuple[str, ...], texts: tuple[str, ...], threshold: float) -> Groups:
    return _leader_groups(ids, texts, DEFAULT_EMBEDDER, threshold)


def _leader_groups(
    ids: Sequence[str], texts: Sequence[str], embedder: Embedder, threshold: float
) -> Groups:
    vecs = np.asarray(embedder.embed(list(texts)), dtype=np.float64)
    leaders: list[int] = []
    members: list[list[int]] = []
    with one_blas_thread():
        for i in range(len(ids)):
            if leaders:
                sims = vecs[leaders] @ vecs[i]
                best = int(np.argmax(sims))  # argmax: the first of equal maxima
                if float(sims[best]) >= threshold - 1e-12:
                    members[best].append(i)
                    continue
            leaders.append(i)
            members.append([i])
    return tuple((i, tuple(m)) for i, m in zip(leaders, members, strict=True))


def session_work(run: RunData) -> dict[int, list[str]]:
    """Per committed session, the node ids of its work items: focus, voluntary, created."""
    out: dict[int, list[str]] = {}
    for s in run.committed_sessions():
        items = [s.focus] if s.focus and s.focus in run.nodes else []
        for nid, n in run.nodes.items():
            if s.session in n.voluntary:
                items.append(nid)
            if n.created == s.session:
                items.append(nid)
        out[s.session] = items
    return out


def _shares(items: Sequence[str], region_of: dict[str, int], n: int) -> dict[int, float]:
    counts = np.zeros(n)
    for nid in items:
        counts[region_of[nid]] += 1
    total = counts.sum()
    return {k: float(counts[k] / total) for k in range(n)} if total else {}


def _best_stretch(
    later: Sequence[int],
    shares: dict[int, dict[int, float]],
    early: dict[int, float],
    p: AttractionParams,
) -> Stretch | None:
    best: Stretch | None = None
    for region in sorted(early):
        run_s: list[int] = []
        run_x: list[float] = []
        for t in [*later, None]:  # None closes the last stretch
            x = None if t is None or t not in shares else shares[t][region] - early[region]
            if x is not None and x >= p.margin - 1e-12:
                run_s.append(t)  # type: ignore[arg-type]
                run_x.append(x)
                continue
            if len(run_s) >= p.min_sessions:
                cand = Stretch(region=region, sessions=run_s, excess=run_x)
                if best is None or (len(cand.sessions), cand.mean_excess) > (
                    len(best.sessions),
                    best.mean_excess,
                ):
                    best = cand
            run_s, run_x = [], []
    return best


def attraction(
    run: RunData, params: AttractionParams = DEFAULT_PARAMS, embedder: Embedder | None = None
) -> Attraction | None:
    """The run's attraction analysis; None when it has no sessions after the early ones."""
    emb = embedder or DEFAULT_EMBEDDER
    committed = [s.session for s in run.committed_sessions()]
    if len(committed) <= params.early_sessions:
        return None
    order = sorted(run.nodes.values(), key=lambda n: (n.created, _num(n.id), n.id))
    regions = leader_regions([n.id for n in order], [n.text for n in order], emb, params.threshold)
    region_of = {nid: r.index for r in regions for nid in r.members}
    work = session_work(run)
    early_items = [i for t in committed[: params.early_sessions] for i in work[t]]
    early = _shares(early_items, region_of, len(regions))
    if not early:  # no work in the early sessions: no baseline
        return None
    shares = {t: sh for t in committed if (sh := _shares(work[t], region_of, len(regions)))}
    later = committed[params.early_sessions :]
    return Attraction(
        params=params,
        embedder=emb.name,
        regions=regions,
        early_share=early,
        shares=shares,
        stretch=_best_stretch(later, shares, early, params),
    )


def _sustained(params: AttractionParams) -> Metric:
    def fn(run: RunData) -> float | None:
        a = attraction(run, params)
        return None if a is None else float(a.sustained_sessions)

    return Metric(
        name="attraction_sustained_sessions",
        definition="the longest stretch of consecutive sessions (after the early sessions) in "
        "which one region's attention share exceeds its early share by at least the margin, "
        f"counted only when at least min_sessions long; 0 when none ({params.describe()})",
        unit=f"sessions ({DEFAULT_EMBEDDER.name})",
        denominator="per run",
        fn=fn,
        higher_is_better=True,
        group="attraction",
        embedder=DEFAULT_EMBEDDER.name,
    )


def _excess(params: AttractionParams) -> Metric:
    def fn(run: RunData) -> float | None:
        a = attraction(run, params)
        return None if a is None or a.stretch is None else a.stretch.mean_excess

    return Metric(
        name="attraction_excess_share",
        definition="the mean excess of the attracting region's attention share over its early "
        "share, across the longest sustained stretch; undefined when there is none "
        f"({params.describe()})",
        unit=f"share ({DEFAULT_EMBEDDER.name})",
        denominator="sessions of the stretch; per run",
        fn=fn,
        higher_is_better=True,
        group="attraction",
        embedder=DEFAULT_EMBEDDER.name,
    )


def with_attraction_params(registry: Registry, params: AttractionParams | None) -> Registry:
    """``registry`` with the attraction metrics bound to a plan's locked parameters."""
    if (
        params is None
        or params == DEFAULT_PARAMS
        or "attraction_sustained_sessions" not in registry
    ):
        return registry
    out = registry.copy()
    for make in (_sustained, _excess):
        metric = make(params)
        out.remove(metric.name)
        out.add(metric)
    return out


REGISTRY.add(_sustained(DEFAULT_PARAMS))
REGISTRY.add(_excess(DEFAULT_PARAMS))
