"""Relay tables (issue 15): per ledger, one row per session (mind, focus, drift, survival); and
per transition kind across runs, each run's mean with a bootstrap interval over runs.

The rows are plain data (:class:`RelayRow`, :class:`TransitionRow`) so ``metrics --csv`` and
the analysis screen can write or show them; :func:`format_relay_tables` prints them as
Markdown for ``metrics`` and ``report``. Only runs that are relays (a session record names its
mind) get tables; other runs are the single-mind baseline of the registry metrics.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.aggregate import DEFAULT_BOOTSTRAP, DEFAULT_SEED, boot_centres
from curiosity_tui.analysis.formatting import fmt
from curiosity_tui.analysis.relay import (
    SURVIVAL_THRESHOLD,
    TRANSITIONS,
    handovers,
    transition_words,
)
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.analysis.similarity import DEFAULT_EMBEDDER
from curiosity_tui.modelio.embedders import Embedder


class RelayRow(BaseModel):
    """One session of one relayed run."""

    run: str
    session: int
    mind: str
    transition: str
    focus: str | None
    drift: float | None
    survival: float | None
    survived: int
    survived_by_id: int
    carried: int
    embedder: str
    drift_undefined: str | None = None


class TransitionRow(BaseModel):
    """One transition kind across runs: means of the runs' means, intervals by run."""

    transition: str
    runs: int
    handovers: int
    drift: float | None
    drift_low: float | None
    drift_high: float | None
    survival: float | None
    survival_low: float | None
    survival_high: float | None
    embedder: str


def is_relay(run: RunData) -> bool:
    return any(getattr(s, "mind", None) for s in run.committed_sessions())


def relay_rows(run: RunData, embedder: Embedder | None = None) -> list[RelayRow]:
    emb = embedder or DEFAULT_EMBEDDER
    return [
        RelayRow(
            run=run.run_id,
            session=h.session,
            mind=h.mind,
            transition=h.transition,
            focus=h.focus,
            drift=h.drift,
            drift_undefined=h.drift_undefined,
            survival=h.survival,
            survived=h.survived,
            survived_by_id=h.survived_by_id,
            carried=h.carried,
            embedder=emb.name,
        )
        for h in handovers(run, emb)
    ]


def _interval(values: list[float], label: str) -> tuple[float | None, float | None]:
    if len(values) < 2:
        return None, None
    centres = boot_centres(tuple(values), label, DEFAULT_BOOTSTRAP, DEFAULT_SEED, "mean")
    lo, hi = np.quantile(centres, [0.025, 0.975])
    return float(lo), float(hi)


def transition_rows(
    runs: Sequence[RunData], embedder: Embedder | None = None
) -> list[TransitionRow]:
    """Per transition kind (same model, other model, model -> human, human -> model): the mean
    over runs of each run's mean drift and survival, with a 95% percentile bootstrap interval
    resampling runs (none with fewer than two runs)."""
    emb = embedder or DEFAULT_EMBEDDER
    per_run = [relay_rows(r, emb) for r in runs if is_relay(r)]
    kinds = list(TRANSITIONS) + ["human_to_human"]
    out: list[TransitionRow] = []
    for kind in kinds:
        drifts: list[float] = []
        survivals: list[float] = []
        n = 0
        for rows in per_run:
            mine = [r for r in rows if r.transition == kind]
            n += len(mine)
            defined = [r.drift for r in mine if r.drift is not None]
            if defined:
                drifts.append(float(np.mean(defined)))
                s = [r.survival for r in mine if r.survival is not None]
                if s:
                    survivals.append(float(np.mean(s)))
        if not drifts and kind == "human_to_human":
            continue
        dl, dh = _interval(drifts, f"relay-drift-{kind}")
        sl, sh = _interval(survivals, f"relay-survival-{kind}")
        out.append(
            TransitionRow(
                transition=kind,
                runs=len(drifts),
                handovers=n,
                drift=float(np.mean(drifts)) if drifts else None,
                drift_low=dl,
                drift_high=dh,
                survival=float(np.mean(survivals)) if survivals else None,
                survival_low=sl,
                survival_high=sh,
                embedder=emb.name,
            )
        )
    return out


def _ci(centre: float | None, lo: float | None, hi: float | None) -> str:
    if centre is None:
        return "—"
    return fmt(centre) + (f" [{fmt(lo)}, {fmt(hi)}]" if lo is not None else "")


def format_relay_tables(runs: Sequence[RunData], embedder: Embedder | None = None) -> str:
    """Markdown: a table per relayed ledger, then the table per transition kind ('' if none)."""
    emb = embedder or DEFAULT_EMBEDDER
    relayed = [r for r in runs if is_relay(r)]
    if not relayed:
        return ""
    out = [
        f"# Relay (root question's signature; embedder {emb.name}; "
        f"survival by id or cosine >= {SURVIVAL_THRESHOLD:.2f})",
        "",
    ]
    for run in relayed:
        out += [
            f"## {run.run_id}",
            "",
            "| session | mind | transition | focus | drift | survival |",
        ]
        out.append("|---|---|---|---|---|---|")
        for r in relay_rows(run, emb):
            surv = "—" if r.survival is None else f"{fmt(r.survival)} ({r.survived}/{r.carried})"
            drift = fmt(r.drift) if r.drift_undefined is None else f"— ({r.drift_undefined})"
            out.append(
                f"| {r.session} | {r.mind} | {transition_words(r.transition)} | "
                f"{r.focus or '—'} | {drift} | {surv} |"
            )
        out.append("")
    out += ["## Per transition kind, across runs (mean of run means [95% bootstrap by run])", ""]
    out += ["| transition | runs | handovers | drift | survival |", "|---|---|---|---|---|"]
    for t in transition_rows(relayed, emb):
        out.append(
            f"| {transition_words(t.transition)} | {t.runs} | {t.handovers} | "
            f"{_ci(t.drift, t.drift_low, t.drift_high)} | "
            f"{_ci(t.survival, t.survival_low, t.survival_high)} |"
        )
    out.append("")
    return "\n".join(out)
