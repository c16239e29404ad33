"""The app's session-input screen shows each session's call list (start and end times, UTC)
and, on each call, the sampling it was sent with (issue 23.1, 23.4); a call from an older ledger
says that these were not recorded."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from textual.widgets import Static

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.ledger.sampling_record import SamplingTable
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.research import ResearchResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import run_ledger
from curiosity_tui.screens.rendering import RenderingScreen

ROOT = Path(__file__).resolve().parents[1]
SEED = "Did the printing press cause the Reformation?"


async def _run(path: Path, options: dict[str, Any]) -> None:
    led = Ledger.create(path, RunMeta(name=path.name, seed=SEED, config="C-cur", options=options))
    try:
        with ScriptedServer(responder=ResearchResponder()) as server:
            async with ModelClient(base_url=server.base_url, api_key="x", model="m") as client:
                assert not (await run_ledger(led, client, sessions=1)).failed
    finally:
        led.close()


def _title(app: Any) -> str:
    return str(app.screen.query_one("#rendering-title", Static).render())


def _body(app: Any) -> str:
    return str(app.screen.query_one("#rendering-body", Static).render())


async def _to(pilot: Any, app: Any, wanted: str, keys: tuple[str, ...] = ("i",)) -> None:
    for _ in range(40):
        if wanted in _title(app):
            return
        await pilot.press(*keys)
    raise AssertionError(f"{wanted!r} never shown; last title: {_title(app)}")


async def test_call_list_and_call_detail_show_times_and_sampling(tmp_path: Path) -> None:
    table = SamplingTable(seed=5).resolved().model_dump(mode="json")
    await _run(tmp_path / "ledgers" / "sampled", {"sampling": table})
    path = tmp_path / "ledgers" / "sampled"
    with Ledger.open(path) as led:
        calls = led.session_records()[0].calls
    first = calls[0]
    assert first.started_at and first.ended_at and first.started_at <= first.ended_at
    app = make_app(tmp_path, ledger=path)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("left_square_bracket", "v")
        assert isinstance(app.screen, RenderingScreen)
        await _to(pilot, app, "model calls")
        body = _body(app)
        assert "started (UTC)" in body and "ended (UTC)" in body
        for call in calls:
            assert call.started_at is not None and call.ended_at is not None
            assert call.started_at.split("T")[1].rstrip("Z") in body
            assert call.ended_at.split("T")[1].rstrip("Z") in body
        await pilot.press("i")
        title = _title(app)
        assert f"call 1 of {len(calls)}" in title
        assert first.sampling is not None
        assert f"seed {first.sampling.seed}" in title
        assert f"temperature {first.sampling.temperature}" in title
        assert f"started {first.started_at}" in title and f"ended {first.ended_at}" in title


async def test_an_old_call_says_times_and_sampling_were_not_recorded(tmp_path: Path) -> None:
    """The repository's example ledgers were written before issue 23."""
    path = tmp_path / "ledgers" / "example-B-pilot02"
    shutil.copytree(ROOT / "ledgers" / "example-B-pilot02", path)
    with Ledger.open(path) as led:
        assert led.session_records()[0].calls[0].sampling is None
    app = make_app(tmp_path, ledger=path)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("left_square_bracket", "v")
        assert isinstance(app.screen, RenderingScreen)
        await _to(pilot, app, "model calls")
        assert "not recorded" in _body(app)
        await _to(pilot, app, "call 1 of")
        title = _title(app)
        assert "sampling: not recorded" in title and "times: not recorded" in title


def test_a_cached_call_says_where_its_reply_came_from() -> None:
    from curiosity_tui.ledger.models import CachedFrom, CallRecord
    from curiosity_tui.widgets.call_list import call_detail, call_list

    call = CallRecord(
        kind="candidate",
        cached=True,
        cached_from=CachedFrom(request_sha256="ab" * 32, started_at="2026-01-02T03:04:05.000006Z"),
        started_at="2026-01-02T04:00:00.000001Z",
        ended_at="2026-01-02T04:00:00.000002Z",
    )
    assert "(cached)" in str(call_list([call]))
    detail = str(call_detail(call))
    assert "cached: not sent; the reply of the call started 2026-01-02T03:04:05.000006Z" in detail
    assert "abababababab" in detail
    assert "(cached)" not in str(call_list([call.model_copy(update={"cached": False})]))
