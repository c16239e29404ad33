"""Aggregation over runs and between-configuration differences with bootstrap intervals.

The unit of observation is the run (report §4 "How to read the numbers"): each metric is
computed per run, then averaged over the runs of a configuration, and the per-run values
are kept beside the mean. A difference between two configurations (A − B of the means)
gets a percentile bootstrap 95% interval that resamples *runs* with replacement within
each configuration independently (numpy, vectorised, seeded). No interval is given when a
side has fewer than two runs with a value — the reason is stated instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.formatting import fmt as fmt  # re-exported: one definition
from curiosity_tui.analysis.formatting import fmt_interval as fmt_interval
from curiosity_tui.analysis.registry import Registry, default_registry
from curiosity_tui.analysis.rundata import RunData

__all__ = ["fmt", "fmt_interval"]

DEFAULT_BOOTSTRAP = 10_000
DEFAULT_SEED = 20240601
Aggregation = Literal["mean", "median"]


class RunValue(BaseModel):
    run_id: str
    value: float | None


class MetricAggregate(BaseModel):
    """One metric over the runs of one configuration."""

    metric: str
    config: str
    aggregation: Aggregation = "mean"
    value: float | None  # the mean (or median) over runs with a value
    n: int  # runs with a value
    n_missing: int  # runs where the metric is not defined
    per_run: list[RunValue]

    def values(self) -> list[float]:
        return [r.value for r in self.per_run if r.value is not None]


class Difference(BaseModel):
    """a − b for one metric, with a bootstrap interval over runs when both n >= 2."""

    metric: str
    a: str
    b: str
    value_a: float | None
    value_b: float | None
    diff: float | None
    n_a: int
    n_b: int
    ci_low: float | None = None
    ci_high: float | None = None
    level: float = 0.95
    n_boot: int = 0
    seed: int | None = None
    method: str = (
        "percentile bootstrap, runs resampled with replacement within each side "
        "(each configuration its own seeded stream)"
    )
    note: str = ""


def splits_contracts(runs: Iterable[RunData]) -> bool:
    """Whether the runs differ in contract (then they group by configuration × contract)."""
    return len({r.contract for r in runs}) > 1


def group_by_config(
    runs: Iterable[RunData], *, split: bool | None = None
) -> dict[str, list[RunData]]:
    """Runs by configuration, or by ``config@contract`` cell when ``split`` (default: when
    the runs differ in contract; one contract keeps the configuration names as before)."""
    listed = list(runs)
    by_cell = splits_contracts(listed) if split is None else split
    out: dict[str, list[RunData]] = {}
    for r in listed:
        out.setdefault(r.cell(by_cell), []).append(r)
    for lst in out.values():
        lst.sort(key=lambda r: r.run_id)
    return out


def _centre(values: Sequence[float], how: Aggregation) -> float | None:
    if not values:
        return None
    return float(np.median(values)) if how == "median" else float(np.mean(values))


def aggregate_metric(
    runs: Sequence[RunData],
    metric: str,
    config: str,
    *,
    registry: Registry | None = None,
    aggregation: Aggregation = "mean",
) -> MetricAggregate:
    reg = registry or default_registry()
    m = reg.get(metric)
    # a run that committed no session has nothing to count: listed, valueless (n_missing)
    per_run = [RunValue(run_id=r.run_id, value=m(r) if r.counted() else None) for r in runs]
    vals = [v.value for v in per_run if v.value is not None]
    return MetricAggregate(
        metric=metric,
        config=config,
        aggregation=aggregation,
        value=_centre(vals, aggregation),
        n=len(vals),
        n_missing=len(per_run) - len(vals),
        per_run=per_run,
    )


def aggregate(
    runs: Iterable[RunData],
    metrics: Sequence[str],
    *,
    registry: Registry | None = None,
    aggregation: Aggregation = "mean",
) -> dict[str, dict[str, MetricAggregate]]:
    """``{config: {metric: MetricAggregate}}`` for every configuration present."""
    reg = registry or default_registry()
    table: dict[str, dict[str, MetricAggregate]] = {}
    for config, rs in group_by_config(runs).items():
        table[config] = {
            m: aggregate_metric(rs, m, config, registry=reg, aggregation=aggregation)
            for m in metrics
        }
    return table


def bootstrap_interval(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
    aggregation: Aggregation = "mean",
) -> tuple[float, float]:
    """Percentile interval of centre(a*) − centre(b*), runs resampled within each side."""
    rng = np.random.default_rng(seed)
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    ia = rng.integers(0, len(xa), size=(n_boot, len(xa)))
    ib = rng.integers(0, len(xb), size=(n_boot, len(xb)))
    if aggregation == "median":
        da = np.median(xa[ia], axis=1) - np.median(xb[ib], axis=1)
    else:
        da = xa[ia].mean(axis=1) - xb[ib].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(da, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def side_seed(seed: int, config: str) -> list[int]:
    """A per-configuration seed: each side's resampling is its own reproducible stream."""
    digest = hashlib.sha256(config.encode("utf-8")).digest()
    return [seed, int.from_bytes(digest[:8], "big")]


#: resampling index matrices kept (each at most _INDEX_CELLS integers: 8 x 4 MiB at most)
_INDEX_CELLS = 1 << 19


def _draw_index(config: str, n: int, n_boot: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(side_seed(seed, config))
    idx = rng.integers(0, n, size=(n_boot, n))
    idx.setflags(write=False)
    return idx


_cached_index = lru_cache(maxsize=8)(_draw_index)


def resample_index(config: str, n: int, n_boot: int, seed: int) -> np.ndarray:
    """The (n_boot, n) run indices of a configuration's bootstrap. They depend only on the
    configuration, n and the seed, so every metric of that configuration shares one draw."""
    if n * n_boot <= _INDEX_CELLS:
        return _cached_index(config, n, n_boot, seed)
    return _draw_index(config, n, n_boot, seed)


@lru_cache(maxsize=2048)
def boot_centres(
    values: tuple[float, ...], config: str, n_boot: int, seed: int, aggregation: Aggregation
) -> np.ndarray:
    """Bootstrap distribution of one configuration's centre (runs resampled), cached so a
    configuration that appears in several comparisons is resampled once, identically."""
    x = np.asarray(values, dtype=float)
    idx = resample_index(config, len(x), n_boot, seed)
    out: np.ndarray = np.median(x[idx], axis=1) if aggregation == "median" else x[idx].mean(axis=1)
    out.setflags(write=False)
    return out


def difference(
    agg_a: MetricAggregate,
    agg_b: MetricAggregate,
    *,
    n_boot: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Difference:
    va, vb = agg_a.values(), agg_b.values()
    diff = None
    if agg_a.value is not None and agg_b.value is not None:
        diff = agg_a.value - agg_b.value
    out = Difference(
        metric=agg_a.metric,
        a=agg_a.config,
        b=agg_b.config,
        value_a=agg_a.value,
        value_b=agg_b.value,
        diff=diff,
        n_a=len(va),
        n_b=len(vb),
        level=level,
    )
    short = [f"{cfg} has n={n}" for cfg, n in ((agg_a.config, len(va)), (agg_b.config, len(vb)))]
    short = [s for s, n in zip(short, (len(va), len(vb)), strict=True) if n < 2]
    if short:
        out.note = "no interval: " + "; ".join(short) + " (a bootstrap over runs needs n >= 2)"
        return out
    ca = boot_centres(tuple(va), agg_a.config, n_boot, seed, agg_a.aggregation)
    cb = boot_centres(tuple(vb), agg_b.config, n_boot, seed, agg_b.aggregation)
    alpha = (1.0 - level) / 2.0
    lo, hi = (float(x) for x in np.quantile(ca - cb, [alpha, 1.0 - alpha]))
    out.ci_low, out.ci_high, out.n_boot, out.seed = lo, hi, n_boot, seed
    if min(len(va), len(vb)) < 5:
        out.note = (
            f"runs per side {len(va)}/{len(vb)}: a bootstrap over so few runs "
            "understates the uncertainty"
        )
    return out
