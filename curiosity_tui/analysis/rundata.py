"""What a metric sees of one run: the final snapshot and the session records.

:class:`RunData` is the single input type of every registry metric (see
:mod:`curiosity_tui.analysis.registry`). It holds the ledger's own shapes (S1, decisions
500 and 501): a node declares every field of ``NodeRecord`` and nothing else; a session
record is the ledger's ``SessionRecord`` (with ``CallRecord`` and ``SessionCounts``),
validated once as it comes in from disk. Tests build runs from the same classes.

RunData files (``*.run.json``) are the analysis layer's own interchange format: one
serialised RunData each. ``load_runs`` reads them, and ledger directories, from a run dir.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curiosity_tui.analysis.signature import (
    QuestionSignature,
    committed_sessions,
    ledger_handed_signatures,
    ledger_signatures,
)
from curiosity_tui.analysis.timeline import NodeState, ledger_timeline
from curiosity_tui.errors import InputError
from curiosity_tui.ledger.models import CallRecord, SessionCounts, SessionRecord
from curiosity_tui.ledger.node_record import NodeRecord, is_live, pulse

#: File suffix of a serialised RunData.
RUN_FILE_SUFFIX = ".run.json"

#: Between configuration and contract in a cell name (``C+cur@pilot-02``), decision 232.
CELL_SEP = "@"


class RunNode(BaseModel):
    """A node in the final snapshot: every field of the ledger's :class:`NodeRecord`, none
    other (decision 500), with defaults so that a test or a run file may leave fields out.

    The order of the fields is the order the run files have always written them in (the ones
    metrics read first, then the rest by name, as the projection's canonical rows give them), so
    a run file's nodes are written as before.
    What hangs off a node is kept as the ledger wrote it (typed by ``NodeRecord``)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    text: str = ""
    parent: str | None = None
    status: str = "open"
    created: int = 0
    resurfaced: list[int] = Field(default_factory=list)
    #: sessions in which a *voluntary* action worked the node (subset of ``resurfaced``)
    voluntary: list[int] = Field(default_factory=list)
    facts: list[Any] = Field(default_factory=list)
    return_condition: Any = None
    checks: list[Any] = Field(default_factory=list)
    merged_into: str | None = None
    curator_priority: int | None = None
    downgrades: list[Any] = Field(default_factory=list)
    evidence: list[Any] = Field(default_factory=list)
    preserved: list[Any] = Field(default_factory=list)
    requirement_counter: int = 0

    def record(self) -> NodeRecord:
        """The node's fields as the ledger's record (the same names; what metrics derive from)."""
        return cast(NodeRecord, vars(self))

    @property
    def pulse(self) -> int:
        return pulse(self.record())

    @property
    def live(self) -> bool:
        return is_live(self.record())


#: A run's session records are the ledger's own classes (decision 501): one class each for a
#: session record, its counts and a call, from the model's reply to the metrics. These names
#: are the ones analysis code used before; they are the same classes, not copies.
RunSession = SessionRecord
RunCounts = SessionCounts
RunCall = CallRecord


class ClosureAttempt(BaseModel):
    """One closure attempt, from the journal (``contract/closures.py``): closed or blocked, the
    requirements unmet at that moment, and the met ones an approved downgrade had waived or
    weakened."""

    model_config = ConfigDict(extra="forbid")

    session: int
    node: str
    seq: int = 0
    closed: bool
    unmet: list[str] = Field(default_factory=list)
    downgraded: list[str] = Field(default_factory=list)
    actor: str = ""


class FailedAttempt(BaseModel):
    """A session attempt that failed (nothing of it was applied): from the ledger's journal."""

    model_config = ConfigDict(extra="forbid")

    session: int
    reason: str = ""
    seq: int = 0  # its session_failed event


#: session-record fields metrics never read (exact inputs, raw outputs): left out of RunData
_HEAVY = frozenset({"inputs", "outputs", "output_text"})
_HEAVY_CALL = frozenset({"request_text", "response_text"})


def _light(record: dict[str, Any]) -> dict[str, Any]:
    """A stored session record without the fields metrics never read (:data:`_HEAVY`, and
    each call's exact request and response text)."""
    out = {k: v for k, v in record.items() if k not in _HEAVY}
    calls = out.get("calls")
    if isinstance(calls, list):
        out["calls"] = [
            {k: v for k, v in c.items() if k not in _HEAVY_CALL} if isinstance(c, dict) else c
            for c in calls
        ]
    return out


class RunData(BaseModel):
    """One run: configuration, id, final snapshot, session records, contract."""

    model_config = ConfigDict(extra="forbid")

    config: str
    run_id: str
    contract: str = ""
    epsilon: float | None = None
    unregistered: bool = False
    nodes: dict[str, RunNode] = Field(default_factory=dict)
    sessions: list[SessionRecord] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)
    #: failed session attempts (a run that stopped early ends on one)
    failed: list[FailedAttempt] = Field(default_factory=list)
    #: sessions the run was started for (``pilot run`` records it); None = not recorded
    planned_sessions: int | None = None
    #: where the run was read from (a ledger dir or a .run.json file); informational
    origin: str = ""
    #: every closure attempt, in journal order; None = not recorded (a run file without it)
    closures: list[ClosureAttempt] | None = None
    #: the root question's signature before session 1 and after each committed session
    #: (analysis/signature.py; the relay's drift and survival)
    signatures: list[QuestionSignature] = Field(default_factory=list)
    #: the signature of the state a session t >= 2 was handed when a curator acted before it
    #: (``session`` = t); other sessions were handed S(t - 1) (decision 223)
    handed: list[QuestionSignature] = Field(default_factory=list)
    #: each question's state after every committed session (analysis/timeline.py; open life,
    #: return latency); None = not recorded (a run file without it)
    timeline: dict[str, list[NodeState]] | None = None

    def cell(self, split: bool) -> str:
        """The group this run counts in: its configuration, or ``config@contract`` when the
        runs compared differ in contract (``split``)."""
        return f"{self.config}{CELL_SEP}{self.contract}" if split else self.config

    def committed_sessions(self) -> list[SessionRecord]:
        return sorted(
            (s for s in self.sessions if s.status == "committed"), key=lambda s: s.session
        )

    def has_session_log(self) -> bool:
        """Whether the session records are the run's own account of its sessions (read from a
        ledger or run file), so an empty list means "no session committed". A bare snapshot
        built in code (no records, no failures, no metadata) has none."""
        return bool(self.sessions or self.failed or self.meta)

    def counted(self) -> bool:
        """Whether the run enters aggregates: it committed a session, or it is a bare snapshot.
        A run that committed none has nothing to count (its snapshot is the seed alone)."""
        return bool(self.committed_sessions()) or not self.has_session_log()

    def questions_by_session(self) -> dict[int, list[str]]:
        """The questions each committed session raised, in session order (for similarity)."""
        return {s.session: list(s.questions) for s in self.committed_sessions()}

    def deltas(self) -> list[float]:
        """Recorded Δ values of committed sessions, in session order: the Δ each PRESERVE test
        read (:meth:`RunSession.decision_delta`); service sessions, which cannot PRESERVE,
        are left out (issue 26). For the pilot as run, every session's recorded Δ."""
        out: list[float] = []
        for s in self.committed_sessions():
            d = s.decision_delta()
            if d is not None and not s.service:
                out.append(d)
        return out

    @property
    def tension_measure(self) -> str:
        """The run's tension measure (``as-run`` unless its options name another)."""
        options = self.meta.get("options")
        setting = options.get("tension") if isinstance(options, dict) else None
        measure = setting.get("measure") if isinstance(setting, dict) else None
        return str(measure or "as-run")

    @classmethod
    def from_ledger(cls, ledger: Any) -> RunData:
        """Build from an open :class:`curiosity_tui.ledger.Ledger`.

        The nodes are the run's final snapshot (:func:`final_snapshot`: after the last
        committed session and its decay, before any curator action after it); session
        records are the committed ones.
        """
        from curiosity_tui.contract.closures import closure_attempts

        meta = ledger.meta
        meta_d: dict[str, Any] = meta.model_dump(mode="json")
        final = final_snapshot(ledger).items()
        nodes = {str(nid): RunNode.model_validate(n) for nid, n in final}
        raw = ledger.raw_sessions()  # validated once, here, as they come in from disk
        sessions = [SessionRecord.model_validate(_light(raw[t])) for t in sorted(raw)]
        options = meta_d.get("options") or {}
        planned = options.get("planned_sessions") if isinstance(options, dict) else None
        return cls(
            failed=[FailedAttempt.model_validate(f) for f in ledger.failed_sessions()],
            planned_sessions=planned if isinstance(planned, int) and planned > 0 else None,
            # a plan's named arm (decision 241) is the run's group; else its configuration
            config=str(options.get("arm") or meta_d.get("config", ""))
            if isinstance(options, dict)
            else str(meta_d.get("config", "")),
            run_id=str(meta_d.get("name") or Path(ledger.path).name),
            contract=str(meta_d.get("contract", "")),
            epsilon=meta_d.get("epsilon"),
            unregistered=bool(meta_d.get("unregistered", False)),
            nodes=nodes,
            sessions=sessions,
            meta=meta_d,
            origin=str(ledger.path),
            closures=[ClosureAttempt.model_validate(c) for c in closure_attempts(ledger)],
            signatures=ledger_signatures(ledger),
            handed=ledger_handed_signatures(ledger),
            timeline=ledger_timeline(ledger),
        )


def final_snapshot(ledger: Any) -> dict[str, NodeRecord]:
    """A run's final snapshot (report §8: "structural measures are computed from the final
    snapshots of each run", "recomputed from the store snapshots after session 5"): the last
    snapshot of the last committed session that is not the curator's. Curator actions after
    it prepare a session that never ran and are not the run's result. Without a committed
    session with a snapshot: the ledger's state (the seed)."""
    committed = committed_sessions(ledger)
    if not committed:
        return dict(ledger.raw_nodes())
    last = max(committed)
    stage = None
    for session, st, _ in ledger.snapshot_index():
        if session == last and st != "curator":
            stage = st
    return dict(ledger.raw_nodes()) if stage is None else ledger.snapshot(last, stage)


def read_run_file(path: Path) -> RunData:
    try:
        run = RunData.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"{path}: cannot read run file: {err.strerror}") from err
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(f"{path}: not a run file: {where}: {first['msg']}") from err
    if not run.origin:
        run.origin = str(path)
    return run


def write_run_file(run: RunData, path: Path) -> None:
    path.write_text(json.dumps(run.model_dump(mode="json"), indent=1) + "\n", encoding="utf-8")


def _open_ledger_run(path: Path) -> RunData:
    from curiosity_tui.ledger import Ledger

    led = Ledger.open(path, write=False)
    try:
        if led.identity_problem is not None:  # the head's run metadata was edited (decision 401)
            raise InputError(
                f"{led.identity_problem}; the run's identity is not what its journal recorded "
                "(run `verify` on it); refused"
            )
        return RunData.from_ledger(led)
    finally:
        led.close()


def load_runs(paths: Iterable[Path]) -> list[RunData]:
    """Read runs from ``*.run.json`` files, ledger dirs, or dirs that contain either.

    A directory holding ``journal.jsonl`` is one ledger; any other directory is searched
    (two levels down) for ledgers and run files. Order: by run id (then by path), over all
    the paths together, so the shards of a sharded pilot give the unsharded pilot's figures.
    """
    from curiosity_tui.analysis.study import runs_of

    runs: list[RunData] = []
    for given in paths:
        p = runs_of(Path(given))  # a study folder: its runs/ (decision 445)
        if not p.exists():
            raise InputError(f"{p}: no such file or directory")
        if p.is_file():
            runs.append(read_run_file(p))
        elif (p / "journal.jsonl").is_file():
            runs.append(_open_ledger_run(p))
        else:
            found: list[Path] = []
            for pattern in (f"*{RUN_FILE_SUFFIX}", f"*/*{RUN_FILE_SUFFIX}"):
                found.extend(p.glob(pattern))
            for pattern in ("*/journal.jsonl", "*/*/journal.jsonl"):
                found.extend(j.parent for j in p.glob(pattern))
            for f in sorted(set(found)):
                runs.append(read_run_file(f) if f.is_file() else _open_ledger_run(f))
    return sorted(runs, key=lambda r: r.run_id)  # stable: equal ids keep their path order
