"""The model curator may not leave the next session without a focus, and its merge targets are
live nodes (issue 11: on Gemma, C+cur's curator archived the last open question)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.protocol.call_specs import curator_spec
from curiosity_tui.runs.runner import model_curate


def _ledger(tmp_path: Path) -> Path:
    path = tmp_path / "L"
    meta = RunMeta(
        name="L", seed="Why did pamphlets spread faster?", config="C+cur", curator="model"
    )
    Ledger.create(path, meta).close()
    return path


def _curate(path: Path, actions: list[dict[str, Any]]) -> list[str]:
    def responder(kind: str, session: int, body: dict[str, Any]) -> dict[str, Any] | None:
        return {"actions": actions} if kind == "curator" else None

    async def go() -> list[str]:
        srv = ScriptedServer(responder=responder).start()
        client = ModelClient(base_url=srv.base_url, api_key="sk-test", model="scripted")
        try:
            with Ledger.open(path, write=True) as led:
                _, notes = await model_curate(led, client, 1, 400)
                return notes
        finally:
            await client.aclose()
            srv.stop()

    return asyncio.run(go())


def test_the_last_open_question_is_not_archived(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    notes = _curate(
        path,
        [
            {
                "action": "archive",
                "node": "q1",
                "priority": None,
                "into": None,
                "reason": "It is answered.",
            }
        ],
    )
    assert len(notes) == 1 and "last open question" in notes[0] and "q1" in notes[0]
    with Ledger.open(path) as led:
        assert led.node("q1")["status"] == "open"
    assert verify(path).ok


def test_a_prioritise_of_the_last_open_question_still_applies(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    notes = _curate(
        path,
        [
            {
                "action": "prioritise",
                "node": "q1",
                "priority": 1,
                "into": None,
                "reason": "It comes first.",
            }
        ],
    )
    assert notes == []
    with Ledger.open(path) as led:
        assert led.node("q1")["curator_priority"] == 1


def test_merge_targets_are_live_nodes_in_the_schema() -> None:
    spec = curator_spec(["q1", "q2", "q3"], ["q1", "q3"])
    schema = spec.json_schema("full")
    action = schema["properties"]["actions"]["items"]
    into = action["properties"]["into"]
    node = action["properties"]["node"]
    flat = str(into) + str(node)
    assert "'q2'" not in flat and "'q1'" in flat and "'q3'" in flat


def test_a_session_record_without_a_mind_dumps_as_before() -> None:
    from curiosity_tui.ledger import Mind, SessionRecord

    assert "mind" not in SessionRecord(session=1).model_dump(mode="json")
    rec = SessionRecord(
        session=2, mind=Mind(kind="model", name="gemma", endpoint="http://127.0.0.1:8080")
    )
    assert SessionRecord.model_validate(rec.model_dump(mode="json")) == rec


def test_the_browser_names_a_real_models_run(tmp_path: Path) -> None:
    """A run by a real model (not scripted) says which model wrote it in the browser header."""
    from curiosity_tui.app import make_app
    from curiosity_tui.screens.browser import BrowserScreen

    path = tmp_path / "gemma-run"
    Ledger.create(
        path, RunMeta(name="gemma-run", seed="Why?", config="C-cur", model="gemma")
    ).close()

    async def header() -> str:
        app = make_app(tmp_path, ledger=path)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(app.screen, BrowserScreen)
            return str(app.screen.sub_title)

    title = asyncio.run(header())
    assert title.endswith("· model gemma") and "scripted" not in title
