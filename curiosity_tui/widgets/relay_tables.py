"""The relay tables in the analysis screen's "Report tables" view (issue 15): one table per
relayed ledger (session, mind, transition, focus, drift, survival) and one per transition kind
across runs with bootstrap intervals by run. Rows come from
:mod:`curiosity_tui.analysis.relay_tables`; run ids and minds are shown literally."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from curiosity_tui.analysis.formatting import fmt
from curiosity_tui.widgets.literal import lit, num
from curiosity_tui.widgets.report_tables import row_table

_WORDS = {
    "same_model": "same model",
    "other_model": "other model",
    "model_to_human": "model -> human",
    "human_to_model": "human -> model",
    "human_to_human": "human -> human",
    "first": "first session",
}


def _ci(centre: float | None, lo: float | None, hi: float | None) -> Text:
    if centre is None:
        return num("—")
    return num(fmt(centre) + (f" [{fmt(lo)}, {fmt(hi)}]" if lo is not None else ""))


def relay_widgets(rows: Sequence[Any], transitions: Sequence[Any]) -> list[Widget]:
    """Titled tables; empty when no run is a relay."""
    if not rows:
        return []
    out: list[Widget] = []
    by_run: dict[str, list[Any]] = {}
    for r in rows:
        by_run.setdefault(r.run, []).append(r)
    emb = rows[0].embedder
    for i, (run, mine) in enumerate(by_run.items()):
        out.append(Static(Text("Relay: ") + lit(run) + Text(f" ({emb})"), classes="an-title"))
        t = row_table(f"table-relay-{i}")
        for c in ("session", "mind", "transition", "focus", "drift", "survival"):
            t.add_column(c)
        for r in mine:
            surv = "—" if r.survival is None else f"{fmt(r.survival)} ({r.survived}/{r.carried})"
            t.add_row(
                num(str(r.session)),
                lit(r.mind),
                Text(_WORDS.get(r.transition, r.transition)),
                lit(r.focus or "—"),
                num(fmt(r.drift)),
                num(surv),
            )
        out.append(t)
    out.append(
        Static(
            Text("Relay per transition kind (mean of run means [95% bootstrap by run])"),
            classes="an-title",
        )
    )
    t = row_table("table-relay-transitions")
    for c in ("transition", "runs", "handovers", "drift", "survival"):
        t.add_column(c)
    for x in transitions:
        t.add_row(
            Text(_WORDS.get(x.transition, x.transition)),
            num(str(x.runs)),
            num(str(x.handovers)),
            _ci(x.drift, x.drift_low, x.drift_high),
            _ci(x.survival, x.survival_low, x.survival_high),
        )
    out.append(t)
    return out
