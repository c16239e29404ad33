"""Every closure attempt of a run, as the journal holds it (for the contract-comparison
metrics, S13): closed or blocked, what stood unmet at that moment, and which met requirements
were met only through an approved downgrade (waived, or weakened before they were satisfied).

The journal is replayed event by event (as the audit does), so each attempt sees the state as
it stood; a closure written around the transitions (a raw ``status_changed`` to closed) counts
as a closure too.
"""

from __future__ import annotations

from typing import Any

from curiosity_tui.contract.rules import Contract
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import FoldState, fold_event
from curiosity_tui.ledger.ledger import JOURNAL_FILE, Ledger
from curiosity_tui.ledger.node_record import requirements


def closure_attempts(led: Ledger) -> list[dict[str, Any]]:
    """``[{session, node, seq, closed, unmet, downgraded, actor}]`` in journal order."""
    st = FoldState()
    #: (node, requirement) ids an approved downgrade waived or weakened
    downgraded: set[tuple[str, str]] = set()
    out: list[dict[str, Any]] = []
    for ev in jr.scan(led.path / JOURNAL_FILE).events:
        kind = ev["kind"]
        if kind == "closure_blocked" or _is_closing(st, ev):
            out.append(_attempt(st, ev, downgraded, closed=kind != "closure_blocked"))
        if kind == "downgrade_decided" and ev["data"].get("decision") == "approve":
            downgraded.update(_decided(st, ev))
        fold_event(st, ev)
    return out


def _is_closing(st: FoldState, ev: dict[str, Any]) -> bool:
    node = ev["node"]
    return ev["kind"] == "node_closed" or (
        ev["kind"] == "status_changed"
        and ev["data"].get("to") == "closed"
        and node in st.nodes
        and st.nodes[node]["status"] != "closed"
    )


def _attempt(
    st: FoldState, ev: dict[str, Any], downgraded: set[tuple[str, str]], *, closed: bool
) -> dict[str, Any]:
    node = ev["node"]
    n = st.nodes[node]
    unmet = list(ev["data"]["unmet"]) if ev["kind"] == "closure_blocked" else Contract.unmet(n)
    met_by_downgrade = [
        r["id"] for r in requirements(n) if (node, r["id"]) in downgraded and r["id"] not in unmet
    ]
    return {
        "session": ev["session"],
        "node": node,
        "seq": ev["seq"],
        "closed": closed,
        "unmet": unmet,
        "downgraded": met_by_downgrade,
        "actor": ev.get("actor", ""),
    }


def _decided(st: FoldState, ev: dict[str, Any]) -> list[tuple[str, str]]:
    node = ev["node"]
    for p in st.nodes[node]["downgrades"] if node in st.nodes else []:
        if p["id"] == ev["data"]["proposal"]:
            return [(node, p["requirement"])]
    return []
