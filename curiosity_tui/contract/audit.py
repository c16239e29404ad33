"""The closure audit (S10): over any ledger, either contract, name with journal seqs

(a) ``unverified_satisfied``: required facts marked satisfied without verified evidence;
(b) ``retired_after_unverified``: requirements retired at a revision after such a mark, and
    whether later session inputs (the saved renderings and call inputs) still carried them;
(c) ``closed_over_unmet``: closures while a required fact stood not satisfied — marked
    ``not_satisfied`` or never checked (``unchecked``); satisfied and waived ones are met;
(d) ``closed_without_verified_evidence``: closures of nodes with facts but no verified evidence.

The audit replays the journal event by event, so every finding is placed at the seq where the
state that makes it a finding held.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import FoldState, fold_event
from curiosity_tui.ledger.ledger import JOURNAL_FILE, Ledger

FindingKind = Literal[
    "unverified_satisfied",
    "retired_after_unverified",
    "closed_over_unmet",
    "closed_without_verified_evidence",
]


class Finding(BaseModel):
    kind: FindingKind
    node: str
    requirement: str | None = None
    seqs: list[int]
    sessions: list[int]
    detail: str
    carried_in: list[int] = Field(
        default_factory=list
    )  # (b): later sessions whose input still had it
    absent_in: list[int] = Field(default_factory=list)  # (b): later sessions whose input did not


class AuditReport(BaseModel):
    ledger: str
    contract: str
    findings: list[Finding]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.kind] = out.get(f.kind, 0) + 1
        return out


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def audit_path(path: str | Path) -> AuditReport:
    with Ledger.open(path) as led:
        return audit(led)


def audit(led: Ledger) -> AuditReport:
    events = jr.scan(led.path / JOURNAL_FILE).events
    st = FoldState()
    findings: list[Finding] = []
    flagged: dict[tuple[str, str], tuple[int, int, str]] = {}  # (node, req) -> (seq, session, text)
    not_sat_seq: dict[tuple[str, str], tuple[int, int]] = {}
    records = {int(k): v for k, v in led._state.sessions.items()}
    for ev in events:
        kind, node, d, seq, session = ev["kind"], ev["node"], ev["data"], ev["seq"], ev["session"]
        closing = kind == "node_closed" or (
            kind == "status_changed"
            and d.get("to") == "closed"
            and node in st.nodes
            and st.nodes[node]["status"] != "closed"
        )
        if closing:
            n = st.nodes[node]
            rc = n.get("return_condition") or {"required_facts": []}
            for r in rc["required_facts"]:
                if r["status"] in ("not_satisfied", "unchecked"):
                    check_seq, check_session = (
                        not_sat_seq.get((node, r["id"]), (None, None))
                        if r["status"] == "not_satisfied"
                        else (None, None)
                    )
                    seqs = [s for s in (check_seq, seq) if s is not None]
                    sessions = sorted({s for s in (check_session, session) if s is not None})
                    stood = (
                        f"stood not satisfied (checked s{r['checked']})"
                        if r["status"] == "not_satisfied"
                        else "stood unchecked (never established)"
                    )
                    findings.append(
                        Finding(
                            kind="closed_over_unmet",
                            node=node,
                            requirement=r["id"],
                            seqs=seqs,
                            sessions=sessions,
                            detail=f"closed at seq {seq} while {r['id']} ({_short(r['text'], 100)}) "
                            f"{stood}",
                        )
                    )
            verified = [e for e in n["evidence"] if e["status"] == "verified"]
            if n["facts"] and not verified:
                findings.append(
                    Finding(
                        kind="closed_without_verified_evidence",
                        node=node,
                        seqs=[seq],
                        sessions=[session],
                        detail=f"closed with {len(n['facts'])} fact(s) on file and no verified evidence record",
                    )
                )
        if kind == "return_condition_revised":
            current = {
                r["id"]: r["status"]
                for r in (st.nodes[node].get("return_condition") or {"required_facts": []})[
                    "required_facts"
                ]
            }
            for rid in d.get("retired", []):
                key = (node, rid)
                # retired while it still stood on the unverified mark (not since re-checked,
                # waived or weakened)
                if key in flagged and current.get(rid) == "satisfied":
                    check_seq, check_session, text = flagged.pop(key)
                    carried, absent = _carried(records, text, after=session)
                    findings.append(
                        Finding(
                            kind="retired_after_unverified",
                            node=node,
                            requirement=rid,
                            seqs=[check_seq, seq],
                            sessions=sorted({check_session, session}),
                            detail=f"{rid} ({_short(text, 100)}) marked satisfied without verified evidence at "
                            f"seq {check_seq}, retired at seq {seq}; later inputs carrying it: "
                            f"{carried or 'none'}",
                            carried_in=carried,
                            absent_in=absent,
                        )
                    )
        fold_event(st, ev)
        if kind == "dependency_checked":
            key = (node, d["requirement"])
            n = st.nodes[node]
            if d["result"] == "satisfied":
                ev_id = d.get("evidence_id")
                rec = next(
                    (
                        e
                        for e in n["evidence"]
                        if e["id"] == ev_id and e["requirement"] == d["requirement"]
                    ),
                    None,
                )
                if rec is None or rec["status"] != "verified":
                    req = next(
                        r
                        for r in n["return_condition"]["required_facts"]
                        if r["id"] == d["requirement"]
                    )
                    flagged[key] = (seq, session, req["text"])
                    findings.append(
                        Finding(
                            kind="unverified_satisfied",
                            node=node,
                            requirement=d["requirement"],
                            seqs=[seq],
                            sessions=[session],
                            detail=f"marked satisfied on: {_short(d['evidence_text'])!r}"
                            + (
                                " (evidence only proposed)"
                                if rec is not None
                                else " (no evidence record)"
                            ),
                        )
                    )
                else:
                    flagged.pop(key, None)
            else:
                flagged.pop(key, None)
                if d["result"] == "not_satisfied":
                    not_sat_seq[key] = (seq, session)
    findings.sort(key=lambda f: (f.seqs[-1], f.kind))
    return AuditReport(ledger=str(led.path), contract=led.meta.contract, findings=findings)


def _carried(
    records: dict[int, dict[str, Any]], text: str, *, after: int
) -> tuple[list[int], list[int]]:
    """Later sessions whose saved inputs contain the requirement text (normalised), and those not."""
    needle = " ".join(text.split()).casefold()
    carried: list[int] = []
    absent: list[int] = []
    for s in sorted(records):
        if s <= after or records[s].get("status") == "failed":
            continue
        blob = " ".join(" ".join(records[s].get("inputs", {}).values()).split()).casefold()
        (carried if needle in blob else absent).append(s)
    return carried, absent
