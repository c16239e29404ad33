"""The closure audit (S10): over any ledger, either contract, name with journal seqs

(a) ``unverified_satisfied``: required facts marked satisfied without verified evidence;
(b) ``retired_after_unverified``: requirements retired at a revision after such a mark, and
    whether later session inputs (the saved renderings and call inputs) still carried them;
(c) ``closed_over_unmet``: closures while a required fact stood not satisfied — marked
    ``not_satisfied`` or never checked (``unchecked``); satisfied and waived ones are met;
(d) ``closed_without_verified_evidence``: closures of nodes with facts but no verified evidence;
(e) ``verified_not_supporting``: a judge said a verified passage does not (``no``) or only
    partly establishes its requirement (decision 520), whoever judged;
(f) ``verified_support_unjudged``: verified evidence no judge the run admits has judged (under
    ``evidence=verified`` or ``asserted``: none at all). Reported under ``evidence=supported``
    and in any ledger holding a support judgement, so audits of ledgers from before the
    judgements are as they were.

The audit replays the journal event by event, so every finding is placed at the seq where the
state that makes it a finding held.

Findings follow the run's contract switches (decision 231): what the contract permits is a
finding of its kind, as before; what the contract forbids is the same kind with
``breach = true`` — (a) under ``evidence=verified`` and (c) under ``closure=binding`` or
``binding+downgrade`` cannot come from the transitions, so a journal holding one was written
around them. The kind says what happened; ``breach`` says whether the contract allowed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from curiosity_tui.contract.support import verified_items
from curiosity_tui.contract_switches import ContractSwitches, switches_of
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import FoldState, fold_event
from curiosity_tui.ledger.ledger import JOURNAL_FILE, Ledger
from curiosity_tui.ledger.node_record import requirements

FindingKind = Literal[
    "unverified_satisfied",
    "retired_after_unverified",
    "closed_over_unmet",
    "closed_without_verified_evidence",
    "verified_not_supporting",
    "verified_support_unjudged",
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
    #: the run's contract forbids this (it cannot come from the transitions); left out of the
    #: dump when false, so permitted findings serialise as before the switches
    breach: bool = False

    @model_serializer(mode="wrap")
    def _omit_no_breach(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if not out.get("breach", True):
            del out["breach"]
        return out


class AuditReport(BaseModel):
    ledger: str
    contract: str
    findings: list[Finding]

    def breaches(self) -> list[Finding]:
        return [f for f in self.findings if f.breach]

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
    """Replay the journal event by event; each step looks at the state as it stood."""
    a = _Audit(
        records={int(k): v for k, v in led.raw_sessions().items()},
        switches=switches_of(led.meta.contract),
    )
    for ev in jr.scan(led.path / JOURNAL_FILE).events:
        if _is_closing(a.st, ev):
            _closure_findings(a, ev)
        if ev["kind"] == "return_condition_revised":
            _retirement_findings(a, ev)
        fold_event(a.st, ev)
        if ev["kind"] == "dependency_checked":
            _note_check(a, ev)
        elif ev["kind"] in ("evidence_verified", "support_judged"):
            _support_findings(a, ev)
    if a.judged or a.switches.evidence == "supported":
        _unjudged_findings(a)
    a.findings.sort(key=lambda f: (f.seqs[-1], f.kind))
    return AuditReport(ledger=str(led.path), contract=led.meta.contract, findings=a.findings)


@dataclass
class _Audit:
    """What the replay carries from event to event."""

    records: dict[int, dict[str, Any]]
    switches: ContractSwitches
    st: FoldState = field(default_factory=FoldState)
    findings: list[Finding] = field(default_factory=list)
    #: (node, req) -> (seq, session, text) of a satisfied mark without verified evidence
    flagged: dict[tuple[str, str], tuple[int, int, str]] = field(default_factory=dict)
    #: (node, req) -> (seq, session) of its latest not_satisfied check
    not_sat_seq: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    #: (node, evidence id) -> (seq, session) of its match check (evidence_verified)
    verified_at: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    #: the journal holds a support judgement
    judged: bool = False


def _is_closing(st: FoldState, ev: dict[str, Any]) -> bool:
    node = ev["node"]
    return ev["kind"] == "node_closed" or (
        ev["kind"] == "status_changed"
        and ev["data"].get("to") == "closed"
        and node in st.nodes
        and st.nodes[node]["status"] != "closed"
    )


def _closure_findings(a: _Audit, ev: dict[str, Any]) -> None:
    """(c) closed over a requirement not met and (d) closed without verified evidence."""
    node, seq, session = ev["node"], ev["seq"], ev["session"]
    n = a.st.nodes[node]
    binding = a.switches.closure != "unconditional"
    for r in requirements(n):
        if r["status"] not in ("not_satisfied", "unchecked"):
            continue
        check_seq, check_session = (
            a.not_sat_seq.get((node, r["id"]), (None, None))
            if r["status"] == "not_satisfied"
            else (None, None)
        )
        stood = (
            f"stood not satisfied (checked s{r['checked']})"
            if r["status"] == "not_satisfied"
            else "stood unchecked (never established)"
        )
        a.findings.append(
            Finding(
                kind="closed_over_unmet",
                node=node,
                requirement=r["id"],
                seqs=[s for s in (check_seq, seq) if s is not None],
                sessions=sorted({s for s in (check_session, session) if s is not None}),
                detail=f"closed at seq {seq} while {r['id']} ({_short(r['text'], 100)}) {stood}"
                + _forbidden(binding, "closure", a.switches.closure),
                breach=binding,
            )
        )
    verified = [e for e in n["evidence"] if e["status"] == "verified"]
    if n["facts"] and not verified:
        a.findings.append(
            Finding(
                kind="closed_without_verified_evidence",
                node=node,
                seqs=[seq],
                sessions=[session],
                detail=f"closed with {len(n['facts'])} fact(s) on file and no verified evidence record",
            )
        )


def _retirement_findings(a: _Audit, ev: dict[str, Any]) -> None:
    """(b) a requirement retired while it stood on an unverified satisfied mark (not since
    re-checked, waived or weakened), and which later inputs still carried it."""
    node, seq, session = ev["node"], ev["seq"], ev["session"]
    current = {r["id"]: r["status"] for r in requirements(a.st.nodes[node])}
    for rid in ev["data"].get("retired", []):
        key = (node, rid)
        if key not in a.flagged or current.get(rid) != "satisfied":
            continue
        check_seq, check_session, text = a.flagged.pop(key)
        carried, absent = _carried(a.records, text, after=session)
        a.findings.append(
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


def _note_check(a: _Audit, ev: dict[str, Any]) -> None:
    """(a) a requirement marked satisfied without verified evidence; remember every mark
    and every not_satisfied check for the later steps."""
    node, d, seq, session = ev["node"], ev["data"], ev["seq"], ev["session"]
    key = (node, d["requirement"])
    if d["result"] != "satisfied":
        a.flagged.pop(key, None)
        if d["result"] == "not_satisfied":
            a.not_sat_seq[key] = (seq, session)
        return
    n = a.st.nodes[node]
    ev_id = d.get("evidence_id")
    rec = next(
        (e for e in n["evidence"] if e["id"] == ev_id and e["requirement"] == d["requirement"]),
        None,
    )
    if rec is not None and rec["status"] == "verified":
        a.flagged.pop(key, None)
        return
    req = next(r for r in requirements(n) if r["id"] == d["requirement"])
    a.flagged[key] = (seq, session, req["text"])
    verified = a.switches.evidence != "asserted"
    a.findings.append(
        Finding(
            kind="unverified_satisfied",
            node=node,
            requirement=d["requirement"],
            seqs=[seq],
            sessions=[session],
            detail=f"marked satisfied on: {_short(d['evidence_text'])!r}"
            + (" (evidence only proposed)" if rec is not None else " (no evidence record)")
            + _forbidden(verified, "evidence", a.switches.evidence),
            breach=verified,
        )
    )


def _support_findings(a: _Audit, ev: dict[str, Any]) -> None:
    """(e) a verified passage judged not (or only partly) to establish its requirement."""
    node, d, seq, session = ev["node"], ev["data"], ev["seq"], ev["session"]
    if ev["kind"] == "evidence_verified":
        a.verified_at[(node, d["evidence_id"])] = (seq, session)
        return
    a.judged = True
    if d["verdict"] == "yes":
        return
    vseq, vsession = a.verified_at.get((node, d["evidence_id"]), (seq, session))
    rec = next(e for e in a.st.nodes[node]["evidence"] if e["id"] == d["evidence_id"])
    how = "does not establish" if d["verdict"] == "no" else "only partly establishes"
    stands = f"; {d['requirement']} stands {d['result']}"
    a.findings.append(
        Finding(
            kind="verified_not_supporting",
            node=node,
            requirement=d["requirement"],
            seqs=sorted({vseq, seq}),
            sessions=sorted({vsession, session}),
            detail=f"{d['evidence_id']} ({_short(rec['passage'], 80)!r}) verified at seq {vseq}; "
            f"{d['by']} judged at seq {seq} that it {how} {d['requirement']}: "
            f"{_short(d['grounds'], 80)}"
            + stands
            + ("" if d["admitted"] else " (judgement not admitted by the run's contract)"),
        )
    )


def _unjudged_findings(a: _Audit) -> None:
    """(f) verified evidence of a requirement still in force that no admitted judge (under
    evidence=supported; under the others, no judge) has judged."""
    supported = a.switches.evidence == "supported"
    for item in verified_items(a.st.nodes):
        counted = [j for j in item.judgements if j.get("admitted") or not supported]
        if counted:
            continue
        vseq, vsession = a.verified_at.get((item.node, item.evidence_id), (0, item.session))
        others = (
            f"; not admitted: {', '.join(j['by'] for j in item.judgements)}"
            if item.judgements
            else ""
        )
        a.findings.append(
            Finding(
                kind="verified_support_unjudged",
                node=item.node,
                requirement=item.requirement,
                seqs=[vseq],
                sessions=[vsession],
                detail=f"{item.evidence_id} ({_short(item.passage, 80)!r}) verified at seq {vseq} "
                f"for {item.requirement} ({_short(item.requirement_text, 60)}), "
                f"{item.requirement_status}; support not judged{others}",
            )
        )


def _forbidden(breach: bool, switch: str, value: str) -> str:
    return f"; a breach: the run's contract ({switch}={value}) forbids this" if breach else ""


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
