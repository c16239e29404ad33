"""Faults in a session: retried transport errors, repairs, truncation, bad ids, markup — and
failed sessions that leave the ledger exactly as before and resume."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.journal import scan
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule
from curiosity_tui.runs.runner import run_ledger

SEED = "Did the printing press cause the Reformation?"


def _ledger(tmp_path: Path, config: str = "C-cur", contract: str = "pilot-02") -> Path:
    path = tmp_path / "run"
    Ledger.create(path, RunMeta(name="run", seed=SEED, config=config, contract=contract)).close()
    return path


def _run(
    path: Path,
    rules: list[ScriptRule],
    sessions: int,
    responder: DemoResponder | None = None,
    timeout_s: float = 60.0,
):
    with ScriptedServer(
        Script(rules=rules), responder=responder or DemoResponder(), hang_s=2.0
    ) as srv:
        client = ModelClient(
            base_url=srv.base_url,
            api_key="sk-test",
            model="scripted",
            retry_backoff_s=0.01,
            max_retries=2,
            timeout_s=timeout_s,
        )
        with Ledger.open(path, write=True) as led:

            async def go():  # type: ignore[no-untyped-def]
                try:
                    return await run_ledger(led, client, sessions=sessions)
                finally:
                    await client.aclose()

            result = asyncio.run(go())
    return result, srv


def _state(path: Path) -> tuple[dict, int]:
    with Ledger.open(path) as led:
        return dict(led.raw_nodes()), led.last_session


def test_transient_500_and_429_are_retried_and_recorded(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    rules = [
        ScriptRule(kind="deliverable", session=1, fault="http_500", times=1),
        ScriptRule(kind="judge-before", session=1, fault="http_429", times=1),
    ]
    result, _ = _run(path, rules, 1)
    assert not result.failed
    with Ledger.open(path) as led:
        rec = led.session_record(1)
        assert rec is not None
        retried = {c.kind: c.retries for c in rec.calls if c.retries}
        assert retried == {"deliverable": 1, "judge-before": 1}


def _assert_failed_cleanly(
    path: Path, before: tuple[dict, int], session: int, reason_part: str
) -> None:
    assert _state(path) == before  # nothing of the failed session applied
    assert verify(path).ok
    events = scan(path / "journal.jsonl").events
    of_session = [e for e in events if e["session"] == session]
    assert {e["kind"] for e in of_session} <= {"session_failed", "batch_committed"}
    with Ledger.open(path) as led:
        failed = led.failed_sessions()
        assert failed and failed[-1]["session"] == session
        assert reason_part in failed[-1]["reason"]
        assert led.session_record(session) is None


@pytest.mark.parametrize(
    ("rule", "reason_part"),
    [
        (ScriptRule(kind="deliverable", session=2, fault="http_500"), "500"),
        (ScriptRule(kind="deliverable", session=2, fault="schema_violation"), "schema"),
        (ScriptRule(kind="deliverable", session=2, fault="length"), "cut off"),
        (ScriptRule(kind="judge-before", session=2, fault="timeout"), "time"),
    ],
    ids=["persistent-500", "schema-violation-twice", "deliverable-truncated", "timeout"],
)
def test_failed_session_leaves_ledger_as_before_and_run_resumes(
    tmp_path: Path, rule: ScriptRule, reason_part: str
) -> None:
    path = _ledger(tmp_path)
    result, _ = _run(path, [], 1)
    assert result.sessions_done == 1
    before = _state(path)
    result, _ = _run(path, [rule], 3, timeout_s=1.0)
    assert result.failed and result.failed[0][0] == 2
    _assert_failed_cleanly(path, before, 2, reason_part)
    # resume: the same command without the fault continues from session 2
    result, _ = _run(path, [], 3)
    assert not result.failed and result.sessions_done == 3
    assert verify(path).ok
    with Ledger.open(path) as led:
        assert [r.session for r in led.session_records()] == [1, 2, 3]


def test_invalid_json_then_valid_is_repaired(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    result, srv = _run(
        path, [ScriptRule(kind="deliverable", session=1, fault="invalid_json", times=1)], 1
    )
    assert not result.failed
    with Ledger.open(path) as led:
        rec = led.session_record(1)
        assert rec is not None
        deliverables = [c for c in rec.calls if c.kind == "deliverable"]
        assert (
            len(deliverables) == 2 and deliverables[0].error
        )  # first reply rejected, repair succeeded
    assert len(srv.requests_of("deliverable")) == 2


def test_truncated_candidate_is_recorded_and_session_continues(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    result, _ = _run(path, [ScriptRule(kind="candidate", session=1, fault="length", times=1)], 1)
    assert not result.failed
    with Ledger.open(path) as led:
        rec = led.session_record(1)
        assert rec is not None
        finishes = [c.finish_reason for c in rec.calls if c.kind == "candidate"]
        assert finishes.count("length") == 1


class _BadIds(DemoResponder):
    def _deliverable(self, s, text, body):  # type: ignore[no-untyped-def]
        reply = super()._deliverable(s, text, body)
        reply["actions"] = [{"node": "q999", "action": "work", "note": "ghost"}]
        reply["facts"] = [{"node": "q404", "text": "ghost fact", "source_id": None}]
        reply["new_questions"] = [
            {"text": "[bold red]x[/] [link=file:///etc]y[/link]\x1b[31m\x07 ok?", "parent": "q77"}
        ]
        return reply


def test_unknown_node_ids_are_rejected_not_applied_and_markup_stored_verbatim(
    tmp_path: Path,
) -> None:
    path = _ledger(tmp_path)
    result, _ = _run(path, [], 1, responder=_BadIds())
    assert not result.failed
    with Ledger.open(path) as led:
        rec = led.session_record(1)
        assert rec is not None
        rejected = rec.rejected
        assert any("q999" in r for r in rejected) and any("q404" in r for r in rejected)
        assert rec.counts.voluntary_actions == 0 and rec.counts.facts == 0
        texts = [n["text"] for n in led.nodes()]
        assert "[bold red]x[/] [link=file:///etc]y[/link]\x1b[31m\x07 ok?" in texts
        odd = next(n for n in led.nodes() if n["text"].startswith("[bold red]"))
        assert odd["parent"] == "q1"  # unknown parent falls back to the focus
    assert verify(path).ok
