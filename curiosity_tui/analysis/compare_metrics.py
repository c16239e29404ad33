"""The paired metrics of a comparison (issue 26, item 6; decision 541): every registry metric
computed on each of the two runs, with the difference b − a.

The same registry and the same functions as ``curiosity-tui metrics`` (one run per side, so
a value is the run's own, not a mean); a metric undefined on either run has no difference.
No interval: two runs are one pair, and the bootstrap of ``metrics`` resamples runs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from curiosity_tui.analysis.registry import Registry, default_registry
from curiosity_tui.analysis.rundata import RunData, load_runs

__all__ = ["PairedMetric", "pair_runs", "paired_metrics"]


class PairedMetric(BaseModel):
    """One registry metric on both runs; ``difference`` = b − a (None when either is)."""

    name: str
    group: str
    unit: str
    a: float | None
    b: float | None
    difference: float | None
    higher_is_better: bool | None = None


def pair_runs(run_a: RunData, run_b: RunData, reg: Registry | None = None) -> list[PairedMetric]:
    """Every metric of ``reg`` (the shipped registry by default) on both runs, registry order."""
    reg = reg or default_registry()
    out = []
    for m in reg:
        a, b = m(run_a), m(run_b)
        out.append(
            PairedMetric(
                name=m.name,
                group=m.group,
                unit=m.unit,
                a=a,
                b=b,
                difference=None if a is None or b is None else b - a,
                higher_is_better=m.higher_is_better,
            )
        )
    return out


def paired_metrics(path_a: Path, path_b: Path) -> list[PairedMetric]:
    """:func:`pair_runs` over the runs of two ledger directories."""
    (run_a,) = load_runs([path_a])
    (run_b,) = load_runs([path_b])
    return pair_runs(run_a, run_b)
