"""Issue 22, item 1: a session record is validated at most twice between the model's reply and
the metrics — once when the complete record enters the journal (reply in), once when it is read
back from disk (disk in) — and not re-validated or re-dumped downstream.

Counted on a scripted session through the real openai client: every validation and every dump
of the session record's classes goes through the class's pydantic validator or serializer, which
the test wraps with a counter. The names ``SessionRecorded`` (the journal kind's data) and
``RunSession`` (what metrics read) are the one class ``SessionRecord`` (decision 501).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.analysis.metrics import persistence_pulse3
from curiosity_tui.analysis.rundata import RunCall, RunCounts, RunData, RunSession
from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger.event_data import SessionRecorded
from curiosity_tui.ledger.models import CallRecord, SessionCounts, SessionRecord
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import plan_runs, run_pilot

SEED = "Did the printing press cause the Reformation?"
#: the distinct classes a session record passes through, from the reply to the metrics
RECORD_CLASSES = tuple(dict.fromkeys((SessionRecord, SessionRecorded, RunSession)))


class _Counted:
    """A pydantic validator or serializer that counts its calls, then delegates."""

    def __init__(self, inner: Any, tally: Counter[str], name: str) -> None:
        self._inner = inner
        self._tally = tally
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        target = getattr(self._inner, attr)
        if not attr.startswith(("validate_", "to_")):
            return target

        def counted(*args: Any, **kwargs: Any) -> Any:
            self._tally[self._name] += 1
            return target(*args, **kwargs)

        return counted


def _instrument(monkeypatch: pytest.MonkeyPatch) -> tuple[Counter[str], Counter[str]]:
    validations: Counter[str] = Counter()
    dumps: Counter[str] = Counter()
    for cls in RECORD_CLASSES:
        v = cls.__dict__["__pydantic_validator__"]
        s = cls.__dict__["__pydantic_serializer__"]
        monkeypatch.setattr(cls, "__pydantic_validator__", _Counted(v, validations, cls.__name__))
        monkeypatch.setattr(cls, "__pydantic_serializer__", _Counted(s, dumps, cls.__name__))
    return validations, dumps


def _one_session(out: Path, srv: ScriptedServer, config: str) -> Path:
    client = ModelClient(
        base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
    )
    specs = plan_runs(seed=SEED, configurations=[config], runs=1, contract="pilot-02")

    async def go() -> Any:
        try:
            return await run_pilot(specs, out, client, sessions=1, concurrency=1)
        finally:
            await client.aclose()

    results = asyncio.run(go())
    assert all(not r.failed for r in results), [r.failed for r in results]
    return out / f"{config}-r0"


@pytest.mark.parametrize("config", ["C-cur", "B"])
def test_a_session_record_is_validated_at_most_twice_from_reply_to_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str
) -> None:
    srv = ScriptedServer(responder=DemoResponder()).start()
    try:
        validations, dumps = _instrument(monkeypatch)
        path = _one_session(tmp_path / "runs", srv, config)
        with Ledger.open(path) as led:
            run = RunData.from_ledger(led)
    finally:
        srv.stop()
    assert [s.session for s in run.sessions] == [1]
    assert run.sessions[0].status == "committed"
    assert persistence_pulse3(run) >= 0
    total = sum(validations.values())
    assert total <= 2, f"session record validated {total} times: {dict(validations)}"
    assert total >= 1, "the record must be validated where it enters"
    assert sum(dumps.values()) <= 2, f"session record dumped: {dict(dumps)}"


def test_one_class_holds_a_session_record_from_reply_to_metrics() -> None:
    """Decision 501: the journal kind's data, the ledger's record and what metrics read are one
    class; so are a call and a session's counts."""
    assert len(RECORD_CLASSES) == 1 and RECORD_CLASSES[0] is SessionRecord
    assert (RunCall, RunCounts) == (CallRecord, SessionCounts)
    fields = RunData.model_fields
    assert fields["sessions"].annotation == list[SessionRecord]
