"""The closure audit (S10): each finding kind on hand-built ledgers, and the acceptance check on
the four committed episode ledgers (exact kinds, nodes, requirements and seqs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from curiosity_tui.cli import build_parser
from curiosity_tui.cli import main as cli
from curiosity_tui.contract import downgrades
from curiosity_tui.contract.audit import audit, audit_path
from curiosity_tui.contract.rules import PILOT_01, PILOT_02
from curiosity_tui.contract.sources import add_source
from curiosity_tui.contract.transitions import attempt_closure, record_check
from curiosity_tui.ledger import Ledger, RunMeta, SessionRecord, iter_ledgers, verify
from curiosity_tui.ledger.events import (
    DependencyChecked,
    DowngradeDecided,
    DowngradeProposed,
    EvidenceAdded,
    FactAttached,
    ReturnConditionRevised,
    ReturnConditionSet,
    StatusChanged,
)
from curiosity_tui.ledger.models import ContractName

REPO = Path(__file__).resolve().parents[1]
LEDGERS = REPO / "ledgers"
R1 = "Quantitative estimate of the percentage of pamphlets printed in Wittenberg."
R2 = "Records of Catholic reformist texts being effectively suppressed."
SOURCE = "Between 1518 and 1520 the presses of Nuremberg issued more pamphlets than Wittenberg's.\n"


def _ledger(path: Path, contract: str) -> Ledger:
    led = Ledger.create(
        path,
        RunMeta(
            name=path.name,
            seed="Did print cause the Reformation?",
            config="C-cur",
            contract=cast(ContractName, contract),
        ),
    )
    with led.batch(1, marker="batch_committed", label="setup") as b:
        b.emit(
            ReturnConditionSet(
                required_facts=[
                    {"id": "r1", "text": R1, "status": "unchecked", "checked": None},
                    {"id": "r2", "text": R2, "status": "unchecked", "checked": None},
                ]
            ),
            node="q1",
            actor="model",
        )
        b.emit(
            FactAttached(text="Nuremberg printed 40-50% of pamphlets."), node="q1", actor="model"
        )
    return led


def _rows(findings: Any) -> list[tuple[str, str, str | None, list[int], list[int]]]:
    return [(f.kind, f.node, f.requirement, f.seqs, f.sessions) for f in findings]


def _check(led: Ledger, contract: Any, rid: str, satisfied: bool, session: int, **kw: Any) -> int:
    with led.batch(session, marker="batch_committed", label="check") as b:
        return record_check(
            b,
            contract,
            "q1",
            rid,
            satisfied=satisfied,
            evidence_text=kw.pop("text", "By H.J. Grabe."),
            **kw,
        ).seq


def _close(led: Ledger, contract: Any, session: int) -> int:
    with led.batch(session, marker="batch_committed", label="answer") as b:
        return attempt_closure(b, contract, "q1", answer="An answer.", delta=-0.0667).seq


def _retire(led: Ledger, session: int, retired: list[str], keep: list[dict[str, Any]]) -> int:
    with led.batch(session, marker="batch_committed", label="rev") as b:
        new = {"id": "r9", "text": "A new requirement.", "status": "unchecked", "checked": None}
        return b.emit(
            ReturnConditionRevised(required_facts=[*keep, new], retired=retired, added=["r9"]),
            node="q1",
            actor="model",
        )["seq"]


def _session_record(led: Ledger, session: int, rendering: str) -> None:
    with led.batch(session) as b:
        b.record_session(
            SessionRecord(session=session, inputs={"rendering": rendering, "deliverable": "..."})
        )


# ----------------------------------------------------------------------------- each kind


def test_unverified_satisfied_and_retired_with_carried_and_absent_sessions(tmp_path: Path) -> None:
    with _ledger(tmp_path / "l", "pilot-01") as led:
        s_check = _check(led, PILOT_01, "r1", True, 2)
        _session_record(led, 2, "input to 2")
        r2 = led.raw_nodes()["q1"]["return_condition"]["required_facts"][1]
        s_rev = _retire(led, 2, ["r1"], [r2])
        # session 3's input still carries the retired text (re-wrapped, other case); 4's does not
        _session_record(led, 3, "- r5: " + R1.upper().replace(" of ", "\n   of ") + " [unchecked]")
        _session_record(led, 4, "nothing about it")
        report = audit(led)
    assert _rows(report.findings) == [
        ("unverified_satisfied", "q1", "r1", [s_check], [2]),
        ("retired_after_unverified", "q1", "r1", [s_check, s_rev], [2]),
    ]
    retired = report.findings[1]
    assert (retired.carried_in, retired.absent_in) == ([3], [4])
    assert (
        "no evidence record" in report.findings[0].detail
        and "H.J. Grabe" in report.findings[0].detail
    )
    assert report.contract == "pilot-01"


def test_retirement_after_a_recheck_or_an_approved_waive_is_not_reported(tmp_path: Path) -> None:
    with _ledger(tmp_path / "l", "pilot-01") as led:
        s1 = _check(led, PILOT_01, "r1", True, 2)
        _check(led, PILOT_01, "r1", False, 3, text="Actually nothing on file.")
        s3 = _check(led, PILOT_01, "r2", True, 3)
        # the waive, as the journal would hold it (a pilot-01 run has no downgrade route, so
        # the events are written directly: the audit reads whatever the journal holds)
        with led.batch(3, marker="batch_committed", label="waive") as b:
            b.emit(
                DowngradeProposed(
                    id="d1",
                    requirement="r1",
                    action="waive",
                    grounds="Cannot be had.",
                    proposed_by="model",
                    session=3,
                ),
                node="q1",
                actor="model",
            )
            b.emit(
                DowngradeDecided(proposal="d1", decision="approve", grounds="Agreed, not needed."),
                node="q1",
                actor="human:ana",
            )
        _retire(led, 3, ["r1"], [led.raw_nodes()["q1"]["return_condition"]["required_facts"][1]])
        report = audit(led)
    # both unverified marks stay reported where they happened; r1's retirement is not
    # attributed to its mark (it was re-checked and then waived by a human); r2 is not retired
    assert _rows(report.findings) == [
        ("unverified_satisfied", "q1", "r1", [s1], [2]),
        ("unverified_satisfied", "q1", "r2", [s3], [3]),
    ]


def test_closed_over_unmet_not_satisfied_and_unchecked(tmp_path: Path) -> None:
    with _ledger(tmp_path / "l", "pilot-01") as led:
        s_check = _check(led, PILOT_01, "r2", False, 3, text="No records in the store.")
        s_close = _close(led, PILOT_01, 3)
        report = audit(led)
    assert _rows(report.findings) == [
        ("closed_over_unmet", "q1", "r1", [s_close], [3]),
        ("closed_over_unmet", "q1", "r2", [s_check, s_close], [3]),
        ("closed_without_verified_evidence", "q1", None, [s_close], [3]),
    ]
    assert "stood unchecked" in report.findings[0].detail
    assert "stood not satisfied (checked s3)" in report.findings[1].detail


def test_closure_with_verified_evidence_and_met_requirements_has_no_findings(
    tmp_path: Path,
) -> None:
    with _ledger(tmp_path / "l", "pilot-02") as led:
        src = tmp_path / "s.txt"
        src.write_text(SOURCE, encoding="utf-8")
        sid = add_source(led, src).source_id
        _check(
            led,
            PILOT_02,
            "r1",
            True,
            2,
            source_id=sid,
            passage="the presses of Nuremberg issued more pamphlets",
        )
        pid = downgrades.propose(
            led,
            "q1",
            "r2",
            "waive",
            grounds="The control is secondary to the main question.",
            actor="model",
        )
        downgrades.decide(
            led,
            pid,
            "approve",
            grounds="Agreed after reading the checks on file.",
            actor="human:ana",
        )
        _close(led, PILOT_02, 3)
        assert led.raw_nodes()["q1"]["status"] == "closed"
        assert audit(led).findings == []


def test_pilot02_blocked_answer_is_no_closure(tmp_path: Path) -> None:
    with _ledger(tmp_path / "l", "pilot-02") as led:
        _check(led, PILOT_02, "r1", True, 2)  # prose only: proposed
        _check(led, PILOT_02, "r2", False, 3)
        _close(led, PILOT_02, 3)
        assert audit(led).findings == []


def test_audit_reads_the_journal_not_the_contract_name(tmp_path: Path) -> None:
    """A pilot-02 ledger whose journal holds transitions the contract would refuse (emitted
    raw) is still audited on what happened: the audit replays event by event."""
    with _ledger(tmp_path / "l", "pilot-02") as led:
        with led.batch(2, marker="batch_committed", label="raw") as b:
            s_check = b.emit(
                DependencyChecked(
                    requirement="r1",
                    claimed="satisfied",
                    evidence_text="trust me",
                    result="satisfied",
                ),
                node="q1",
                actor="model",
            )["seq"]
            b.emit(
                EvidenceAdded(
                    id="e1", requirement="r2", session=2, passage="other", status="proposed"
                ),
                node="q1",
                actor="model",
            )
        with led.batch(3, marker="batch_committed", label="raw") as b:
            s_close = b.emit(
                StatusChanged(to="closed", reason="done"), node="q1", actor="human:ana"
            )["seq"]
        report = audit(led)
    assert _rows(report.findings) == [
        ("unverified_satisfied", "q1", "r1", [s_check], [2]),
        ("closed_over_unmet", "q1", "r2", [s_close], [3]),
        ("closed_without_verified_evidence", "q1", None, [s_close], [3]),
    ]


# ----------------------------------------------------------------------------- committed episodes


def _journal(name: str) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in (LEDGERS / name / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    ]


@pytest.fixture(scope="module")
def episodes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("episodes")
    for name in (
        "episode-grabe-pilot01",
        "episode-grabe-pilot02",
        "episode-suppression-pilot01",
        "episode-suppression-pilot02",
    ):
        shutil.copytree(LEDGERS / name, out / name, ignore=shutil.ignore_patterns("writer.lock"))
    return out


def test_grabe_pilot01_audit_names_the_unverified_mark_and_the_retirement(episodes: Path) -> None:
    journal = _journal("episode-grabe-pilot01")
    [check] = [
        e
        for e in journal
        if e["kind"] == "dependency_checked" and "H.J. Grabe" in e["data"]["evidence_text"]
    ]
    [revision] = [
        e
        for e in journal
        if e["kind"] == "return_condition_revised" and "r1" in e["data"]["retired"]
    ]
    assert (check["seq"], check["session"], revision["seq"], revision["session"]) == (
        24,
        2,
        27,
        2,
    )  # pinned
    assert check["data"]["result"] == "satisfied" and check["data"]["evidence_id"] is None
    report = audit_path(episodes / "episode-grabe-pilot01")
    assert _rows(report.findings) == [
        ("unverified_satisfied", "q1", "r1", [check["seq"]], [2]),
        ("retired_after_unverified", "q1", "r1", [check["seq"], revision["seq"]], [2]),
    ]
    retired = report.findings[1]
    assert retired.carried_in == [] and retired.absent_in == [3, 4, 5]
    # and the saved inputs really lack the requirement text, while the snapshots keep the evidence
    with Ledger.open(episodes / "episode-grabe-pilot01") as led:
        for s in (3, 4, 5):
            rec = led.session_record(s)
            assert rec is not None and "pamphlets produced in Wittenberg" not in " ".join(
                rec.inputs.values()
            )
            assert "H.J. Grabe" not in " ".join(rec.inputs.values())
        assert any("H.J. Grabe" in c["evidence_text"] for c in led.snapshot(5)["q1"]["checks"])


def test_suppression_pilot01_audit_names_the_closure_over_the_unmet_control(episodes: Path) -> None:
    journal = _journal("episode-suppression-pilot01")
    [check] = [
        e
        for e in journal
        if e["kind"] == "dependency_checked" and "strictly require" in e["data"]["evidence_text"]
    ]
    [closed] = [e for e in journal if e["kind"] == "node_closed"]
    [answered] = [e for e in journal if e["kind"] == "node_answered"]
    assert (check["seq"], answered["seq"], closed["seq"], closed["session"]) == (
        31,
        35,
        36,
        3,
    )  # pinned
    assert closed["node"] == "q1" and closed["data"]["unmet"] == ["r1"]
    assert answered["data"]["delta"] == pytest.approx(-0.0667, abs=5e-5)
    report = audit_path(episodes / "episode-suppression-pilot01")
    assert _rows(report.findings) == [
        ("closed_over_unmet", "q1", "r1", [check["seq"], closed["seq"]], [3]),
        ("closed_without_verified_evidence", "q1", None, [closed["seq"]], [3]),
    ]
    # the next independent step: q1 is neither in session 4's queue nor rendered
    with Ledger.open(episodes / "episode-suppression-pilot01") as led:
        rec4 = led.session_record(4)
        assert rec4 is not None and rec4.focus != "q1" and " q1 |" not in rec4.rendering


def test_grabe_pilot02_no_findings_and_the_journal_shows_why(episodes: Path) -> None:
    assert audit_path(episodes / "episode-grabe-pilot02").findings == []
    journal = _journal("episode-grabe-pilot02")
    [added] = [
        e for e in journal if e["kind"] == "evidence_added" and "H.J. Grabe" in e["data"]["passage"]
    ]
    assert (
        added["data"]["status"] == "proposed"
        and added["data"]["source_id"] is None
        and added["session"] == 2
    )
    verified = {e["data"]["evidence_id"] for e in journal if e["kind"] == "evidence_verified"}
    assert added["data"]["id"] not in verified
    [check] = [
        e
        for e in journal
        if e["kind"] == "dependency_checked" and e["data"]["evidence_id"] == added["data"]["id"]
    ]
    assert check["data"]["claimed"] == "satisfied" and check["data"]["result"] == "unchecked"
    [rev] = [e for e in journal if e["kind"] == "return_condition_revised" and e["session"] == 2]
    assert "r1" in rev["data"]["carried"] and rev["data"]["retired"] == []
    with Ledger.open(episodes / "episode-grabe-pilot02") as led:
        rec3 = led.session_record(3)
        assert rec3 is not None and "pamphlets produced in Wittenberg" in rec3.rendering


def test_suppression_pilot02_no_findings_and_the_journal_shows_why(episodes: Path) -> None:
    assert audit_path(episodes / "episode-suppression-pilot02").findings == []
    journal = _journal("episode-suppression-pilot02")
    assert not [e for e in journal if e["kind"] == "node_closed" and e["node"] == "q1"]
    [blocked] = [e for e in journal if e["kind"] == "closure_blocked"]
    assert (blocked["node"], blocked["session"], blocked["data"]["unmet"]) == ("q1", 3, ["r1"])
    kept = [
        e
        for e in journal
        if e["kind"] == "candidate_preserved" and e["data"]["reason"] == "closure_blocked"
    ]
    assert [(e["node"], e["session"], e["seq"]) for e in kept] == [("q1", 3, blocked["seq"] + 1)]
    [proposal] = [e for e in journal if e["kind"] == "downgrade_proposed"]
    assert proposal["actor"] == "model" and proposal["data"]["id"] == "d1"
    assert (
        proposal["data"]["requirement"],
        proposal["data"]["action"],
        proposal["data"]["status"],
    ) == ("r1", "waive", "pending")
    assert not [e for e in journal if e["kind"] == "downgrade_decided"]
    with Ledger.open(episodes / "episode-suppression-pilot02") as led:
        assert led.raw_nodes()["q1"]["status"] == "open"
        assert [p.id for p in downgrades.list_downgrades(led, pending_only=True)] == ["d1"]


def test_every_committed_ledger_verifies() -> None:
    found = list(iter_ledgers(LEDGERS))
    names = {p.name for p in found}
    assert {
        "episode-grabe-pilot01",
        "episode-grabe-pilot02",
        "episode-suppression-pilot01",
        "episode-suppression-pilot02",
        "evidence-pilot02",
    } <= names
    for p in found:
        report = verify(p)
        assert report.ok, f"{p.name}: {report.summary()}"


@pytest.mark.parametrize(
    ("name", "config", "contract"),
    [
        ("episode-grabe-pilot01", "C+cur", "pilot-01"),
        ("episode-grabe-pilot02", "C+cur", "pilot-02"),
        ("episode-suppression-pilot01", "C-cur", "pilot-01"),
        ("episode-suppression-pilot02", "C-cur", "pilot-02"),
    ],
)
def test_episode_run_metadata_names_its_contract(
    episodes: Path, name: str, config: str, contract: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with Ledger.open(episodes / name) as led:
        meta = led.meta.model_dump()
    assert (meta["config"], meta["contract"], meta["name"]) == (config, contract, name)
    # `ledger show --json` belongs to another issue; use it when it is there
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    if "ledger" not in (commands or {}):
        return
    code = cli(["ledger", "show", str(episodes / name), "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert code == 0
    run_meta = shown["meta"]
    assert (run_meta["contract"], run_meta["config"], run_meta["name"]) == (contract, config, name)


# ----------------------------------------------------------------------------- CLI


def test_cli_audit_json_and_exit_codes(episodes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["audit", str(episodes / "episode-suppression-pilot01"), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [
        (f["kind"], f["node"], f["requirement"], f["seqs"], f["sessions"]) for f in data["findings"]
    ] == [
        ("closed_over_unmet", "q1", "r1", [31, 36], [3]),
        ("closed_without_verified_evidence", "q1", None, [36], [3]),
    ]
    assert all(
        set(f) >= {"kind", "node", "requirement", "seqs", "sessions", "detail"}
        for f in data["findings"]
    )
    assert cli(["audit", str(episodes / "episode-grabe-pilot02"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"findings": []}
    assert cli(["audit", str(episodes / "episode-grabe-pilot01")]) == 1
    text = capsys.readouterr().out
    assert "unverified_satisfied: q1/r1 at seq 24 (session 2)" in text
    assert "retired_after_unverified: q1/r1 at seq 24, 27 (session 2)" in text


def test_cli_audit_as_a_subprocess(episodes: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = [sys.executable, "-m", "curiosity_tui", "audit"]
    bad = subprocess.run(
        [*run, str(episodes / "episode-grabe-pilot01"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert bad.returncode == 1, bad.stderr
    assert [f["kind"] for f in json.loads(bad.stdout)["findings"]] == [
        "unverified_satisfied",
        "retired_after_unverified",
    ]
    good = subprocess.run(
        [*run, str(episodes / "episode-suppression-pilot02")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert good.returncode == 0 and "0 finding(s)" in good.stdout


def test_only_the_two_pilot01_episodes_have_findings_among_committed_ledgers() -> None:
    with_findings = {p.name for p in iter_ledgers(LEDGERS) if audit_path(p).findings}
    # the one ledger a real model wrote (Gemma 3 270M on llama-server) closed questions that had
    # no requirements, with facts but no verified evidence: S10 (d) reports that, and it is no
    # breach of pilot-02 (nothing was closed over an unmet requirement)
    real = audit_path(LEDGERS / "real-gemma3-270m-C-cur-pilot02")
    assert {f.kind for f in real.findings} == {"closed_without_verified_evidence"}
    assert real.breaches() == []
    assert with_findings == {
        "episode-grabe-pilot01",
        "episode-suppression-pilot01",
        "real-gemma3-270m-C-cur-pilot02",
    }
