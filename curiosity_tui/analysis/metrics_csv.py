"""``metrics --csv`` and ``metrics --csv-differences``: the rows the printed tables are built
from (:class:`~curiosity_tui.analysis.tables.MetricsDoc`), in long format.

- one row per run × metric: the per-run values behind every mean the tables print;
- one row per comparison × metric: the differences with their bootstrap interval as two
  columns (``ci_low``, ``ci_high``), empty when there is none.

Column names are documented in docs/csv.md.
"""

from __future__ import annotations

from curiosity_tui.analysis.practice import replies_of
from curiosity_tui.analysis.tables import MetricsDoc
from curiosity_tui.csvfile import Cell

__all__ = ["DIFFERENCE_COLUMNS", "METRIC_COLUMNS", "difference_rows", "metric_rows"]

METRIC_COLUMNS: tuple[str, ...] = ("metric", "config", "run", "value", "replies")

DIFFERENCE_COLUMNS: tuple[str, ...] = (
    "metric",
    "a",
    "b",
    "value_a",
    "value_b",
    "diff",
    "n_a",
    "n_b",
    "ci_low",
    "ci_high",
    "level",
    "n_boot",
    "seed",
    "note",
    "replies",
)


def metric_rows(doc: MetricsDoc) -> list[list[Cell]]:
    """metric (registry order) × configuration (table order) × run (id order)."""
    rows: list[list[Cell]] = []
    for metric, by_config in doc.metrics.items():
        for config in doc.configs:
            agg = by_config.get(config)
            if agg is None:
                continue
            rows.extend(
                [metric, config, rv.run_id, rv.value, doc.run_replies.get(rv.run_id, "model")]
                for rv in agg.per_run
            )
    return rows


def difference_rows(doc: MetricsDoc) -> list[list[Cell]]:
    """One row per difference the tables print (a − b of the means)."""
    return [
        [
            d.metric,
            d.a,
            d.b,
            d.value_a,
            d.value_b,
            d.diff,
            d.n_a,
            d.n_b,
            d.ci_low,
            d.ci_high,
            d.level,
            d.n_boot if d.ci_low is not None else None,
            d.seed,
            d.note or None,
            replies_of(
                [doc.replies_by_config.get(d.a, "model"), doc.replies_by_config.get(d.b, "model")]
            ),
        ]
        for d in doc.differences
    ]
