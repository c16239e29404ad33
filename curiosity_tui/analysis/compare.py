"""Two ledgers side by side (issue 26, item 6; decision 540): two runs aligned session by
session — what each session focused on and decided, which nodes were new or changed after
it (the browser's NEW / CHG), the facts and checks it added, the closures it made or had
blocked — with the registry's metrics paired (:mod:`curiosity_tui.analysis.compare_metrics`).

Domain code (no textual): ``curiosity-tui compare A B`` prints it
(:mod:`curiosity_tui.analysis.compare_text`), ``--json`` dumps :class:`Comparison`, and the
comparison screen shows it beside the two trees. The two sides are read through
:class:`~curiosity_tui.ledger.view.LedgerView`, the browser's own read model, so "after
session t" means here what the browser's slider means: the last snapshot of session t
(after its decay, and after the curator's actions when a curator acted).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from curiosity_tui.analysis.compare_metrics import PairedMetric, paired_metrics
from curiosity_tui.contract.closures import closure_attempts
from curiosity_tui.errors import InputError
from curiosity_tui.ledger.view import LedgerView, State, node_num

__all__ = [
    "AlignedSession",
    "CheckAdded",
    "ClosureSeen",
    "Comparison",
    "CuratorAction",
    "FactAdded",
    "NodeMark",
    "PairedMetric",
    "RunSide",
    "SideSession",
    "align",
    "compare_paths",
    "opened_views",
    "position_of",
    "run_side",
]

#: the run properties whose difference the comparison names ("differ in: config, curator")
DIFF_FIELDS = ("config", "contract", "curator", "model", "minds", "seed")


class NodeMark(BaseModel):
    """A node new or changed after the session (the browser's NEW / CHG)."""

    node: str
    mark: Literal["new", "changed"]
    status: str
    text: str


class FactAdded(BaseModel):
    node: str
    text: str


class CheckAdded(BaseModel):
    node: str
    requirement: str
    result: str


class ClosureSeen(BaseModel):
    """A closure attempt of the session: closed, or blocked with the requirements unmet."""

    node: str
    closed: bool
    unmet: list[str] = Field(default_factory=list)
    actor: str = ""


class CuratorAction(BaseModel):
    """What a curator (a person or the model curator) did after the session, before the next."""

    node: str
    kind: str
    actor: str
    what: str
    reason: str = ""


class SideSession(BaseModel):
    """One run's session t: ``absent`` when the run has no session t (it ran fewer)."""

    session: int
    state: Literal["committed", "failed", "absent"]
    mind: str | None = None
    focus: str | None = None
    focus_text: str = ""
    decision: str | None = None
    delta: float | None = None
    questions: int = 0
    reason: str = ""  # why a failed session failed
    #: the nodes after the session, by status (empty for an absent session)
    statuses: dict[str, int] = Field(default_factory=dict)
    marks: list[NodeMark] = Field(default_factory=list)
    facts: list[FactAdded] = Field(default_factory=list)
    checks: list[CheckAdded] = Field(default_factory=list)
    closures: list[ClosureSeen] = Field(default_factory=list)
    #: the curator's actions after the session (they show in the tree's NEW / CHG too)
    curator: list[CuratorAction] = Field(default_factory=list)

    @property
    def closed(self) -> list[ClosureSeen]:
        return [c for c in self.closures if c.closed]

    @property
    def blocked(self) -> list[ClosureSeen]:
        return [c for c in self.closures if not c.closed]


class AlignedSession(BaseModel):
    session: int
    a: SideSession
    b: SideSession


class RunSide(BaseModel):
    """What one side is: where it was read from and the run's identity."""

    path: str
    name: str
    config: str
    contract: str
    curator: str
    seed: str
    model: str | None = None
    scripted: bool = False
    sessions: int = 0
    #: who took the sessions, in first-seen order (a relay names several)
    minds: list[str] = Field(default_factory=list)


class Comparison(BaseModel):
    """Two runs aligned session by session, with their metrics paired."""

    a: RunSide
    b: RunSide
    #: the fields of :data:`DIFF_FIELDS` in which the two runs differ
    differ: list[str] = Field(default_factory=list)
    sessions: list[AlignedSession] = Field(default_factory=list)
    metrics: list[PairedMetric] = Field(default_factory=list)


# --------------------------------------------------------------------------- one side


def position_of(view: LedgerView, session: int) -> int | None:
    """The slider index of "after session ``session``" in ``view``; None: no snapshot."""
    for i, pos in enumerate(view.positions):
        if pos.session == session:
            return i
    return None


def run_side(view: LedgerView) -> RunSide:
    meta = view.meta
    records = view.ledger.raw_sessions()
    minds: list[str] = []
    for t in sorted(records):
        mind = view.mind(t)
        if mind and mind not in minds:
            minds.append(mind)
    return RunSide(
        path=str(view.path),
        name=meta.name or view.path.name,
        config=str(meta.options.get("arm") or meta.config),
        contract=str(meta.contract),
        curator=str(meta.curator),
        seed=meta.seed,
        model=meta.model,
        scripted=bool(meta.options.get("scripted")),
        sessions=sum(1 for r in records.values() if r.get("status", "committed") == "committed"),
        minds=minds,
    )


def _added(state: State, session: int) -> tuple[list[FactAdded], list[CheckAdded]]:
    facts: list[FactAdded] = []
    checks: list[CheckAdded] = []
    for nid in sorted(state.nodes, key=node_num):
        node = state.nodes[nid]
        for f in node.get("facts") or []:
            if isinstance(f, dict) and f.get("session") == session:
                facts.append(FactAdded(node=nid, text=str(f.get("text", ""))))
        for c in node.get("checks") or []:
            if isinstance(c, dict) and c.get("session") == session:
                checks.append(
                    CheckAdded(
                        node=nid,
                        requirement=str(c.get("requirement", "")),
                        result=str(c.get("result") or c.get("claimed") or ""),
                    )
                )
    return facts, checks


#: event kinds a curator writes between sessions (decision 081; downgrades decided by a person)
CURATOR_KINDS = frozenset(
    {
        "curator_priority_set",
        "nodes_merged",
        "status_changed",
        "curator_reverted",
        "downgrade_decided",
    }
)


def _what(ev: dict[str, Any]) -> str:
    data = ev.get("data") or {}
    kind = ev["kind"]
    if kind == "curator_priority_set":
        p = data.get("priority")
        return "priority cleared" if p is None else f"priority {p}"
    if kind == "status_changed":
        return f"→ {data.get('to', '?')}"
    if kind == "nodes_merged":
        return f"merged into {data.get('into', '?')}"
    if kind == "downgrade_decided":
        return f"downgrade {data.get('decision', '?')}"
    return str(kind).replace("_", " ")


def curator_actions(view: LedgerView) -> dict[int, list[CuratorAction]]:
    """session -> the curator's actions after it: events of a curator's kind, by an actor
    other than the model or the system, written after the session's own snapshots (so a
    person who took the session in a relay is not read as its curator)."""
    from curiosity_tui.ledger import journal as jr
    from curiosity_tui.ledger.ledger import JOURNAL_FILE

    ends: dict[int, int] = {}
    for session, stage, seq in view.snapshot_index:
        if stage != "curator":
            ends[session] = seq
    out: dict[int, list[CuratorAction]] = {}
    for ev in jr.scan(view.path / JOURNAL_FILE).events:
        actor = str(ev.get("actor", ""))
        t = ev.get("session")
        if ev["kind"] not in CURATOR_KINDS or actor in ("model", "system") or t is None:
            continue
        if ev["seq"] <= ends.get(t, 0):
            continue
        data = ev.get("data") or {}
        out.setdefault(int(t), []).append(
            CuratorAction(
                node=str(ev.get("node") or data.get("node") or ""),
                kind=ev["kind"],
                actor=actor,
                what=_what(ev),
                reason=str(data.get("reason") or data.get("grounds") or ""),
            )
        )
    return out


def _marks(state: State) -> list[NodeMark]:
    out = []
    for nid in sorted(state.changed, key=node_num):
        node = state.nodes.get(nid)
        if node is None:
            continue
        mark: Literal["new", "changed"] = "new" if state.changed[nid] == "new" else "changed"
        out.append(
            NodeMark(node=nid, mark=mark, status=str(node["status"]), text=str(node["text"]))
        )
    return out


def side_session(
    view: LedgerView,
    session: int,
    closures: list[dict[str, Any]],
    failed: dict[int, str],
    curator: dict[int, list[CuratorAction]] | None = None,
) -> SideSession:
    """Session ``session`` of the run ``view`` shows (``closures``: its closure attempts)."""
    rec = view.ledger.raw_sessions().get(session)
    if rec is None or rec.get("status") == "failed":
        if session in failed or (rec is not None and rec.get("status") == "failed"):
            reason = failed.get(session) or str((rec or {}).get("error") or "")
            return SideSession(session=session, state="failed", reason=reason)
        return SideSession(session=session, state="absent")
    idx = position_of(view, session)
    state = view.state(idx) if idx is not None else None
    focus = rec.get("focus")
    out = SideSession(
        session=session,
        state="committed",
        mind=view.mind(session),
        focus=focus,
        decision=rec.get("decision"),
        delta=rec.get("delta"),
        questions=len(rec.get("questions") or []),
        closures=[
            ClosureSeen(
                node=str(c["node"]),
                closed=bool(c["closed"]),
                unmet=list(c.get("unmet") or []),
                actor=str(c.get("actor", "")),
            )
            for c in closures
            if c.get("session") == session
        ],
        curator=list((curator or {}).get(session, [])),
    )
    if state is not None:
        counts: dict[str, int] = {}
        for n in state.nodes.values():
            counts[n["status"]] = counts.get(n["status"], 0) + 1
        out.statuses = dict(sorted(counts.items()))
        out.marks = _marks(state)
        out.facts, out.checks = _added(state, session)
        if focus in state.nodes:
            out.focus_text = str(state.nodes[focus]["text"])
    return out


# ----------------------------------------------------------------------------- both


def _differ(a: RunSide, b: RunSide) -> list[str]:
    return [f for f in DIFF_FIELDS if getattr(a, f) != getattr(b, f)]


def _session_numbers(view: LedgerView) -> set[int]:
    numbers = set(view.ledger.raw_sessions())
    numbers.update(int(f["session"]) for f in view.ledger.failed_sessions())
    return numbers


def align(view_a: LedgerView, view_b: LedgerView) -> Comparison:
    """Both runs session by session (every session either ran), without metrics. Each
    ledger's journal is read twice (closure attempts, curator actions): these are small next
    to the snapshots the states come from."""
    a, b = run_side(view_a), run_side(view_b)
    numbers = sorted(_session_numbers(view_a) | _session_numbers(view_b))
    sides = []
    for view in (view_a, view_b):
        closures = closure_attempts(view.ledger)
        failed = {
            int(f["session"]): str(f.get("reason", "")) for f in view.ledger.failed_sessions()
        }
        acts = curator_actions(view)
        sides.append([side_session(view, t, closures, failed, acts) for t in numbers])
    sessions = [
        AlignedSession(session=t, a=sa, b=sb) for t, sa, sb in zip(numbers, *sides, strict=True)
    ]
    return Comparison(a=a, b=b, differ=_differ(a, b), sessions=sessions)


@contextmanager
def opened_views(path_a: Path, path_b: Path) -> Iterator[tuple[LedgerView, LedgerView]]:
    """Both ledgers opened read-only (one line naming the path that is not a ledger)."""
    views: list[LedgerView] = []
    try:
        for p in (Path(path_a), Path(path_b)):
            if not (p / "journal.jsonl").is_file():
                raise InputError(f"{p}: not a ledger (no journal.jsonl); compare takes two ledgers")
            views.append(LedgerView(p))
        yield views[0], views[1]
    finally:
        for v in views:
            v.close()


def compare_paths(path_a: Path, path_b: Path, *, metrics: bool = True) -> Comparison:
    """The comparison of two ledger directories, with the paired metrics unless ``metrics``
    is False."""
    with opened_views(path_a, path_b) as (va, vb):
        comp = align(va, vb)
    if metrics:
        comp.metrics = paired_metrics(Path(path_a), Path(path_b))
    return comp
