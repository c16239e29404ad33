"""A question's signature at a session (issue 15, the relay's drift; docs/protocol.md §Relay).

The signature of the root question (the seed, ``q1``; decision 222) as it stood after session
``t`` (``t = 0``: before session 1) is:

* its text;
* its return condition and those of its living questions: required facts (id and text),
  required actions, closure tests;
* its living questions: every descendant whose status is not closed, archived or merged (id
  and text).

"After session t" is the session's last own snapshot (after its decay), before any curator
acts on it; "handed to session t" is the state session t began from (after the curator, when
one acted: :func:`ledger_handed_signatures`), so the curator's changes enter neither drift
(decision 223).

The embedded text (:meth:`QuestionSignature.as_text`) is the parts themselves, one a line in
a fixed order, without labels: only what the definition names is compared (decision 421).
A ledger without a root question (arms A and B keep no store) has an empty signature, and
whatever compares it is undefined (:meth:`QuestionSignature.undefined_reason`).
:class:`QuestionSignature` is what :class:`~curiosity_tui.analysis.rundata.RunData` carries per
committed session, so drift and survival can be computed from run files as from ledgers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from curiosity_tui.ledger.node_record import NOT_LIVE, NodeRecord

ROOT = "q1"


class SignatureItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    text: str


class QuestionSignature(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session: int
    question: str = ROOT
    text: str = ""
    required_facts: list[SignatureItem] = Field(default_factory=list)
    required_actions: list[str] = Field(default_factory=list)
    closure_tests: list[str] = Field(default_factory=list)
    living: list[SignatureItem] = Field(default_factory=list)

    def as_text(self) -> str:
        """The text that is embedded: one line per part, in a fixed order (question, required
        facts, required actions, closure tests, living questions), without labels."""
        lines = [self.text]
        lines += [f.text for f in self.required_facts]
        lines += list(self.required_actions)
        lines += [c for c in self.closure_tests if c]
        lines += [q.text for q in self.living]
        return "\n".join(lines)

    def undefined_reason(self) -> str | None:
        """Why a comparison with this signature is undefined, or None."""
        if not self.question:
            return "no root question (the run keeps no question store)"
        if not self.as_text().strip():
            return "the root question's signature is empty"
        return None


def _root(nodes: Mapping[str, NodeRecord]) -> str | None:
    if ROOT in nodes:
        return ROOT
    roots = sorted(i for i, n in nodes.items() if n.get("parent") is None)
    return roots[0] if roots else None


def _living_under(nodes: Mapping[str, NodeRecord], root: str) -> list[str]:
    children: dict[str, list[str]] = {}
    for nid, n in nodes.items():
        parent = n.get("parent")
        if parent is not None:
            children.setdefault(str(parent), []).append(nid)
    out: list[str] = []
    stack = sorted(children.get(root, []), reverse=True)
    while stack:
        nid = stack.pop()
        if nodes[nid].get("status") not in NOT_LIVE:
            out.append(nid)
        stack.extend(sorted(children.get(nid, []), reverse=True))
    return sorted(out, key=_id_order)


def _id_order(nid: str) -> tuple[int, str]:
    digits = "".join(ch for ch in nid if ch.isdigit())
    return (int(digits) if digits else 0, nid)


def signature_of(nodes: Mapping[str, NodeRecord], session: int) -> QuestionSignature:
    """The root question's signature in ``nodes`` (a ledger's raw node dicts)."""
    root = _root(nodes)
    if root is None:
        return QuestionSignature(session=session, question="")
    living = _living_under(nodes, root)
    sig = QuestionSignature(session=session, question=root, text=str(nodes[root].get("text", "")))
    for nid in [root, *living]:
        rc = nodes[nid].get("return_condition")
        if not rc:
            continue
        for rf in rc.get("required_facts") or []:
            sig.required_facts.append(SignatureItem(id=f"{nid}.{rf['id']}", text=str(rf["text"])))
        sig.required_actions.extend(str(a) for a in rc.get("required_actions") or [])
        if rc.get("closure_test"):
            sig.closure_tests.append(str(rc["closure_test"]))
    sig.living = [SignatureItem(id=nid, text=str(nodes[nid].get("text", ""))) for nid in living]
    return sig


def committed_sessions(ledger: Any) -> list[int]:
    """The numbers of a ledger's committed sessions, ascending, read from the stored records
    without building (and validating) a record each."""
    raw = ledger.raw_sessions()
    return sorted(t for t, r in raw.items() if r.get("status", "committed") == "committed")


def ledger_signatures(ledger: Any) -> list[QuestionSignature]:
    """Signatures before session 1 and after each committed session (each session's last
    snapshot that is not the curator's)."""
    committed = committed_sessions(ledger)
    if not committed:
        return []
    stage: dict[int, str] = {}
    for session, st, _ in ledger.snapshot_index():  # in seq order: the last one wins
        if st != "curator":
            stage[session] = st
    out = [signature_of(ledger.state_before(1), 0)]
    for t in committed:
        if t in stage:
            out.append(signature_of(ledger.snapshot(t, stage[t]), t))
    return out


def ledger_handed_signatures(ledger: Any) -> list[QuestionSignature]:
    """For each committed session t >= 2 that began from a curator's snapshot, the signature
    of the state it was handed (``session`` = t). Sessions without one began from S(t - 1)."""
    committed = committed_sessions(ledger)
    curated = {session for session, st, _ in ledger.snapshot_index() if st == "curator"}
    return [
        signature_of(ledger.snapshot(t - 1, "curator"), t)
        for t in committed
        if t >= 2 and t - 1 in curated
    ]
