"""One node shape (decision 500): ``ledger.node_record.NodeRecord`` is what the fold builds,
what the disk gives back and what every reader types against.

- every node the fold builds (every node-changing event kind), every node of the example
  ledgers and every node read back from a projection has exactly NodeRecord's keys, nested
  entries included (no key missing, none unknown);
- the event data models that put entries on a node dump to the entries' keys, and
  ``analysis.rundata.RunNode`` declares NodeRecord's fields and nothing else (no
  ``extra="allow"``): the shapes cannot drift apart;
- a misspelt key read through NodeRecord is a mypy error (so the typing cannot quietly
  fall back to ``Any``).
"""

from __future__ import annotations

import textwrap
import types
import typing
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from ledger_builders import build

from curiosity_tui.analysis.rundata import RunNode
from curiosity_tui.contract import downgrades, support
from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger import node_record as nr
from curiosity_tui.ledger.events import (
    CandidatePreserved,
    CuratorPrioritySet,
    CuratorReverted,
    DowngradeProposed,
    EvidenceAdded,
    EvidenceVerified,
    FactAttached,
    NodeAnswered,
    NodeClosed,
    NodesMerged,
    QuestionResurfaced,
    SessionStarted,
    StatusChanged,
)
from curiosity_tui.ledger.models import (
    Downgrade,
    DowngradeDecision,
    EvidenceRecord,
    MatchCheck,
    RequiredFact,
    SessionRecord,
    SupportJudgement,
)

LEDGERS = Path(__file__).resolve().parent.parent / "ledgers"


def _shape_problems(value: Any, tp: Any, where: str) -> list[str]:
    """Where ``value`` does not have the keys the TypedDicts in ``tp`` declare."""
    origin = get_origin(tp)
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not a dict"]
        hints = get_type_hints(tp, include_extras=True)  # NotRequired kept (3.11 needs it)
        required = {k for k, h in hints.items() if get_origin(h) is not typing.NotRequired}
        out = [f"{where}: missing {k!r}" for k in sorted(required - value.keys())]
        out += [f"{where}: unknown {k!r}" for k in sorted(value.keys() - hints.keys())]
        for k in value.keys() & hints.keys():
            out += _shape_problems(value[k], hints[k], f"{where}.{k}")
        return out
    if origin is typing.NotRequired:
        return _shape_problems(value, get_args(tp)[0], where)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, not a list"]
        return [
            p
            for i, v in enumerate(value)
            for p in _shape_problems(v, get_args(tp)[0], f"{where}[{i}]")
        ]
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in get_args(tp):
            return []
        inner = [a for a in get_args(tp) if a is not type(None)]
        return _shape_problems(value, inner[0], where) if len(inner) == 1 else []
    return []


def _assert_nodes(nodes: dict[str, Any], label: str) -> None:
    problems = [
        p for nid, n in nodes.items() for p in _shape_problems(n, nr.NodeRecord, f"{label}:{nid}")
    ]
    assert problems == []


def _every_kind(path: Path) -> Ledger:
    """A ledger whose nodes went through every node-changing event kind (a self-approved
    downgrade too: the decision's one optional key)."""
    led = build(path, 6)
    t = led.last_session + 1
    with led.batch(t) as b:
        b.emit(SessionStarted(focus="q1"))
        b.emit(FactAttached(text="a fact", source="src-1"), node="q1", actor="model")
        b.emit(
            EvidenceAdded(id="e1", requirement="r1", session=t, passage="p"),
            node="q1",
            actor="model",
        )
        b.emit(
            EvidenceAdded(id="e2", requirement="r1", session=t, passage="q"),
            node="q1",
            actor="model",
        )
        match = MatchCheck(offset=3, method="exact", checked_by="system", checked_at="now")
        b.emit(EvidenceVerified(evidence_id="e1", match=match), node="q1")
        support.judge_in_batch(
            b,
            "q1",
            "e1",
            "partly",
            grounds="The passage names the figure but not its source.",
            by="human:ann",
        )
        for d in ("d1", "d2"):
            b.emit(
                DowngradeProposed(
                    id=d,
                    requirement="r2",
                    action="weaken",
                    new_text="weaker",
                    grounds="The requirement cannot be met with sources on file.",
                    proposed_by="human:ann",
                    session=t,
                ),
                node="q1",
                actor="human:ann",
            )
        b.emit(QuestionResurfaced(how="voluntary"), node="q2", actor="model")
        b.emit(CuratorPrioritySet(priority=2, reason="r"), node="q2", actor="human:ann")
        b.emit(StatusChanged(to="archived", reason="x"), node="q3")
        b.emit(NodesMerged(into="q2", reason="dup"), node="q4")
        b.emit(CandidatePreserved(text="c", delta=0.5), node="q2", actor="model")
        b.emit(NodeAnswered(answer="a", delta=0.5), node="q2", actor="model")
        b.emit(NodeClosed(reason="done"), node="q2")
        b.snapshot("session")
        b.record_session(SessionRecord(session=t))
    downgrades.decide(
        led,
        "d1",
        "approve",
        grounds="The weaker text still answers the question well.",
        actor="human:ann",
        allow_self_approval=True,
    )
    downgrades.decide(
        led,
        "d2",
        "reject",
        grounds="The original requirement still matters here.",
        actor="human:bob",
    )
    with led.batch(t, marker="batch_committed", label="revert") as b:
        b.emit(
            CuratorReverted(
                reverts=1, action="priority", reason="taken back", restores_priority=True
            ),
            node="q2",
            actor="human:ann",
        )
    return led


def test_the_fold_builds_node_records_for_every_kind(tmp_path: Path) -> None:
    led = _every_kind(tmp_path / "l")
    try:
        nodes = led.raw_nodes()
        _assert_nodes(nodes, "fold")
        q1 = nodes["q1"]
        assert (
            q1["evidence"][0]["match"] is not None and q1["downgrades"][0]["decision"] is not None
        )
        assert q1["downgrades"][0]["decision"].get("self_approval") is True
        assert "self_approval" not in (q1["downgrades"][1]["decision"] or {})
        for session, stage, _ in led.snapshot_index():
            _assert_nodes(led.snapshot(session, stage), f"snapshot {session}/{stage}")
    finally:
        led.close()
    reopened = Ledger.open(tmp_path / "l", write=False)  # the projection's node rows
    try:
        _assert_nodes(reopened.raw_nodes(), "reopened")
        assert reopened.node("q1") == reopened.raw_nodes()["q1"]
        assert reopened.node("q1") is not reopened.raw_nodes()["q1"]  # a copy
    finally:
        reopened.close()


@pytest.mark.skipif(not LEDGERS.is_dir(), reason="no example ledgers in this checkout")
def test_the_example_ledgers_hold_node_records() -> None:
    checked = 0
    for journal in sorted(LEDGERS.glob("*/journal.jsonl")):
        led = Ledger.open(journal.parent, write=False)
        try:
            _assert_nodes(led.raw_nodes(), journal.parent.name)
            checked += len(led.raw_nodes())
        finally:
            led.close()
    assert checked > 0


@pytest.mark.parametrize(
    ("model", "entry"),
    [
        (RequiredFact, nr.RequirementEntry),
        (EvidenceRecord, nr.EvidenceEntry),
        (MatchCheck, nr.MatchEntry),
        (Downgrade, nr.DowngradeEntry),
        (DowngradeDecision, nr.DowngradeDecisionEntry),
        (SupportJudgement, nr.SupportEntry),
    ],
)
def test_event_models_dump_to_the_entries_keys(model: Any, entry: Any) -> None:
    assert set(model.model_fields) == set(get_type_hints(entry))


def test_run_node_declares_the_node_record_and_nothing_else() -> None:
    assert list(RunNode.model_fields) != [] and set(RunNode.model_fields) == set(
        get_type_hints(nr.NodeRecord)
    )
    assert RunNode.model_config.get("extra") == "forbid"
    full = {"id": "q1", "text": "t", "status": "open", "created": 0}
    with pytest.raises(ValueError, match="statsu"):
        RunNode.model_validate({**full, "statsu": "open"})


def test_a_misspelt_node_key_is_a_mypy_error(tmp_path: Path) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        textwrap.dedent(
            """
            from curiosity_tui.ledger.ledger import Ledger

            def status_of(led: Ledger) -> str:
                node = led.raw_nodes()["q1"]
                ok: str = node["status"]
                return node["statsu"]
            """
        ),
        encoding="utf-8",
    )
    out, err, code = mypy_api.run(
        [
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            "--follow-imports",
            "silent",
            "--ignore-missing-imports",
            "--no-error-summary",
            str(snippet),
        ]
    )
    assert code == 1, out + err
    lines = [ln for ln in out.splitlines() if ": error:" in ln]
    assert len(lines) == 1 and '"statsu"' in lines[0] and "NodeRecord" in lines[0], out
