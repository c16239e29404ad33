"""ε sweep: re-classification of recorded Δ values (report §4 "ε sweep").

A session PRESERVEs iff Δ < −ε (strict). The sweep re-applies that test to the Δ values
recorded during the runs at other thresholds. It is *not* a set of runs at those
thresholds: had ε differed, the decisions, the store and every later Δ could have
differed too. Only the realised path is a valid trajectory. Every printout carries this.

Every Δ is rounded to 12 places first, as the PRESERVE decision rounds it
(:data:`~curiosity_tui.protocol.tension.DELTA_DECIMALS`), so a Δ given unrounded (``sweep
--deltas``) is classified as the session would have classified it. Runs under different
contracts are never pooled (decision 234): with more than one contract the tables are per
``config@contract`` cell, and ``--pooled`` pools configurations within each contract. Nor are
Δ values of different tension measures (issue 26, decision 530): runs that differ in it get a
table per measure. With Δ per candidate, the value re-classified is the one PRESERVE read (the
greatest candidate's); service sessions, which cannot PRESERVE, are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.aggregate import splits_contracts
from curiosity_tui.analysis.practice import replies_of, run_replies
from curiosity_tui.analysis.rundata import CELL_SEP, RunData
from curiosity_tui.protocol.tension import DELTA_DECIMALS

DEFAULT_EPSILONS: tuple[float, ...] = (0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.40)

CAVEAT = (
    "This is a re-classification of the {n} Δ values recorded during the runs{at}, "
    "not {k} sets of runs. At a different threshold the decisions could have differed, "
    "and with them the store state and every subsequent Δ; those trajectories were never "
    "observed. Only the realised path is a valid trajectory."
)


class SweepRow(BaseModel):
    epsilon: float
    preserved: int
    n: int
    rate: float | None


class SweepResult(BaseModel):
    label: str = "all"
    n: int
    recorded_epsilons: list[float]
    rows: list[SweepRow]
    caveat: str
    #: whose replies the Δ values came from: model, scripted (practice) or mixed (442)
    replies: str = "model"


def rounded(delta: float) -> float:
    """Δ as the PRESERVE decision compares it: rounded to 12 places (−0.0 read as 0.0)."""
    return round(float(delta), DELTA_DECIMALS) + 0.0


def preserves(delta: float, epsilon: float) -> bool:
    """The protocol's test: PRESERVE iff Δ < −ε (strict), on the rounded Δ."""
    return rounded(delta) < -epsilon


def sweep(
    deltas: Sequence[float],
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    *,
    recorded_epsilons: Iterable[float] = (),
    label: str = "all",
) -> SweepResult:
    d = np.asarray([rounded(x) for x in deltas], dtype=float)
    eps = np.asarray(list(epsilons), dtype=float)
    # (len(eps), len(d)) comparison matrix; strict inequality as the protocol states it
    counts = (d[None, :] < -eps[:, None]).sum(axis=1) if d.size else np.zeros(len(eps), int)
    rows = [
        SweepRow(
            epsilon=float(e),
            preserved=int(c),
            n=int(d.size),
            rate=(float(c) / d.size if d.size else None),
        )
        for e, c in zip(eps, counts, strict=True)
    ]
    rec = sorted({float(e) for e in recorded_epsilons})
    at = ""
    if rec:
        at = " at ε = " + ", ".join(f"{e:g}" for e in rec)
    return SweepResult(
        label=label,
        n=int(d.size),
        recorded_epsilons=rec,
        rows=rows,
        caveat=CAVEAT.format(n=int(d.size), at=at, k=len(rows)),
    )


def sweep_runs(
    runs: Iterable[RunData],
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    *,
    by_config: bool = True,
) -> list[SweepResult]:
    """One sweep per configuration that recorded Δ values (per ``config@contract`` cell when
    the runs differ in contract); ``by_config=False`` pools configurations, never contracts."""
    listed = list(runs)
    split = splits_contracts(listed)
    base: dict[str, list[RunData]] = {}
    for r in listed:
        label = r.cell(split) if by_config else ("all" + (CELL_SEP + r.contract if split else ""))
        base.setdefault(label, []).append(r)
    groups: dict[str, list[RunData]] = {}
    for label, rs in base.items():
        mixed = len({r.tension_measure for r in rs}) > 1
        for r in rs:  # Δ of different measures are never pooled (decision 530)
            groups.setdefault(
                label + (f" — tension {r.tension_measure}" if mixed else ""), []
            ).append(r)
    out: list[SweepResult] = []
    for label in sorted(groups):
        rs = groups[label]
        deltas = [d for r in rs for d in r.deltas()]
        if not deltas:
            continue
        rec: set[float] = set()
        for r in rs:
            if r.epsilon is not None:
                rec.add(r.epsilon)
            rec.update(s.epsilon for s in r.committed_sessions() if s.epsilon is not None)
        res = sweep(deltas, epsilons, recorded_epsilons=rec, label=label)
        res.replies = replies_of(run_replies(r) for r in rs)
        out.append(res)
    return out


def format_sweep(result: SweepResult) -> str:
    head = ["ε", *(f"{r.epsilon:.2f}" for r in result.rows)]
    body = [
        "preservation rate",
        *("—" if r.rate is None else f"{r.rate:.2f}" for r in result.rows),
    ]
    count = ["preserved / n", *(f"{r.preserved}/{r.n}" for r in result.rows)]
    replies = "" if result.replies == "model" else f" — {result.replies.upper()} replies"
    lines = [
        f"ε sweep — {result.label}{replies} (re-classification of recorded Δ, not runs)",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        "| " + " | ".join(body) + " |",
        "| " + " | ".join(count) + " |",
        "",
        result.caveat,
    ]
    return "\n".join(lines)
