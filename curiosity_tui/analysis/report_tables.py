"""The report's tables as Markdown, in the pilot report's layouts (§8 "The Ledger"; §4 P2,
P3, tokens, ε sweep), built from the same :class:`~curiosity_tui.analysis.tables.MetricsDoc`
and :class:`~curiosity_tui.analysis.sweep.SweepResult` as ``metrics``, ``sweep`` and the CSV
exports, so the numbers cannot disagree. Also the per-run values per configuration with a
bootstrap interval of each mean: the table beside each per-run figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.aggregate import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_SEED,
    MetricAggregate,
    boot_centres,
    fmt,
    fmt_interval,
)
from curiosity_tui.analysis.markdown import md_cell, md_table
from curiosity_tui.analysis.practice import replies_row
from curiosity_tui.analysis.registry import Registry
from curiosity_tui.analysis.sweep import SweepResult
from curiosity_tui.analysis.tables import (
    LEDGER_COLUMNS,
    LEDGER_ROWS,
    P2_ROWS,
    P3_ROWS,
    PAIR_LABELS,
    STANDARD_PAIRS,
    TOKEN_ROWS,
    MetricsDoc,
)

__all__ = [
    "ARM_LABELS",
    "ConfigSpread",
    "differences_md",
    "ledger_md",
    "p2_md",
    "p3_md",
    "registry_md",
    "spread",
    "spread_md",
    "sweep_md",
    "tokens_md",
]

#: the pilot report's column titles
ARM_LABELS: dict[str, str] = {
    "B-armed+cur": "self-ask + store, curator",
    "C+cur": "protocol, curator",
    "B-armed-cur": "self-ask + store, no curator",
    "C-cur": "protocol, no curator",
}


def _title(config: str) -> str:
    label = ARM_LABELS.get(config)
    return f"{label} ({config})" if label else config


def _cell(doc: MetricsDoc, metric: str, config: str) -> str:
    agg = doc.metrics.get(metric, {}).get(config)
    return fmt(None if agg is None else agg.value)


def _rows(doc: MetricsDoc, rows: Sequence[tuple[str, str]], cols: Sequence[str]) -> list[list[str]]:
    return [
        [label.strip(), *(_cell(doc, metric, c) for c in cols)]
        for label, metric in rows
        if metric in doc.metrics
    ]


def ledger_md(doc: MetricsDoc) -> list[str]:
    """§8: final snapshots, mean over runs; PRESERVE decisions / all decisions."""
    cols = [c for c in LEDGER_COLUMNS if c in doc.configs]
    if not cols:
        return []
    rows = _rows(doc, LEDGER_ROWS, cols)
    pres = []
    for c in cols:
        d = doc.decisions.get(c)
        pres.append("—" if d is None or d.decisions == 0 else f"{d.preserve}/{d.decisions}")
    rows.append(["PRESERVE decisions / all decisions", *pres])
    return md_table(["", *(_title(c) for c in cols)], rows)


def p2_md(doc: MetricsDoc, pair: tuple[str, str]) -> list[str]:
    """§4 P2: the package against self-ask with the same store, one curator condition."""
    if not all(c in doc.configs for c in pair):
        return []
    return md_table(["metric", *(_title(c) for c in pair)], _rows(doc, P2_ROWS, pair))


def p3_md(doc: MetricsDoc) -> list[str]:
    """§4 P3: curator removal, with → without, per arm."""
    arms = [
        (label, w, wo)
        for label, w, wo in (
            ("self-ask + store: with → without", "B-armed+cur", "B-armed-cur"),
            ("protocol arm: with → without", "C+cur", "C-cur"),
        )
        if w in doc.configs and wo in doc.configs
    ]
    if not arms:
        return []
    rows = [
        [label, *(f"{_cell(doc, m, w)} → {_cell(doc, m, wo)}" for _, w, wo in arms)]
        for label, m in P3_ROWS
        if m in doc.metrics
    ]
    return md_table(["metric", *(a[0] for a in arms)], rows)


def tokens_md(doc: MetricsDoc) -> list[str]:
    return md_table(["", *doc.configs], _rows(doc, TOKEN_ROWS, doc.configs))


def sweep_md(result: SweepResult) -> list[str]:
    """§4 ε sweep: one column per threshold; the caveat goes under the table."""
    head = ["ε", *(f"{r.epsilon:.2f}" for r in result.rows)]
    rate = ["preservation rate", *(fmt(r.rate) for r in result.rows)]
    count = ["preserved / n", *(f"{r.preserved}/{r.n}" for r in result.rows)]
    return md_table(head, [rate, count])


def differences_md(doc: MetricsDoc) -> list[str]:
    """One row per comparison × metric; each distinct note once, under the table."""
    rows: list[list[str]] = []
    notes: dict[str, None] = {}
    for a, b in STANDARD_PAIRS:
        for d in doc.differences:
            if (d.a, d.b) == (a, b) and d.diff is not None:
                rows.append([PAIR_LABELS[(a, b)], d.metric, f"{d.diff:+.2f}", fmt_interval(d)])
                if d.note:
                    notes[f"{a} − {b}: {d.note}"] = None
    if not rows:
        return []
    table = md_table(["comparison", "metric", "a − b", "95% interval"], rows)
    return [*table, "", *(f"- {md_cell(n)}" for n in notes)] if notes else table


class ConfigSpread(BaseModel):
    """One metric in one configuration: per-run values, mean, interval of the mean."""

    config: str
    values: list[float]
    runs: list[str]
    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None


def spread(
    agg: MetricAggregate, *, n_boot: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED
) -> ConfigSpread:
    """Percentile bootstrap 95% interval of the mean, runs resampled (none below two runs)."""
    pairs = [(r.run_id, r.value) for r in agg.per_run if r.value is not None]
    out = ConfigSpread(
        config=agg.config,
        values=[v for _, v in pairs],
        runs=[r for r, _ in pairs],
        mean=agg.value,
    )
    if len(pairs) >= 2:
        centres = boot_centres(tuple(out.values), agg.config, n_boot, seed, agg.aggregation)
        lo, hi = np.quantile(centres, [0.025, 0.975])
        out.ci_low, out.ci_high = float(lo), float(hi)
    return out


def spread_md(spreads: Sequence[ConfigSpread]) -> list[str]:
    rows = [
        [
            _title(s.config),
            str(len(s.values)),
            fmt(s.mean),
            "no interval (fewer than two runs)"
            if s.ci_low is None or s.ci_high is None
            else f"[{s.ci_low:.2f}, {s.ci_high:.2f}]",
            ", ".join(fmt(v) for v in s.values) or "—",
        ]
        for s in spreads
    ]
    return md_table(["configuration", "runs", "mean", "95% interval", "per run"], rows)


def registry_md(doc: MetricsDoc, registry: Registry) -> list[str]:
    """Every registry metric by group: mean over runs (n) per configuration."""
    out: list[str] = []
    groups: dict[str, list[str]] = {}
    for m in registry:
        groups.setdefault(m.group, []).append(m.name)
    for group, names in groups.items():
        rows = []
        for name in names:
            cells = []
            for c in doc.configs:
                agg = doc.metrics[name][c]
                cells.append(f"{fmt(agg.value)} (n={agg.n})" if agg.value is not None else "—")
            emb = registry.get(name).embedder
            rows.append([f"{name} [{emb}]" if emb else name, *cells])
        table = md_table(["metric", *doc.configs], rows)
        out += [f"### {group}", "", *table[:2], *replies_row(doc), *table[2:], ""]
    return out
