"""A full human-curated run of three sessions against the scripted server, driven by keys:
a priority change, a downgrade decision, a merge and an archive between sessions, each in the
journal with the human actor; the ledger verifies afterwards."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.node_record import requirements
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.screens.curator import CuratorScreen
from curiosity_tui.screens.decide import DecideScreen
from curiosity_tui.screens.downgrades import DowngradesScreen
from curiosity_tui.screens.monitor import RunMonitorScreen, RunRequest
from curiosity_tui.screens.reason import ReasonScreen


class ProposingResponder(DemoResponder):
    """The demo model, plus a waive proposal for the focus's r1 in session 1."""

    def _deliverable(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        out = super()._deliverable(s, text, body)
        if s == 1:
            out["downgrade_proposals"] = [
                {
                    "node": "q1",
                    "fact_id": "r1",
                    "proposal": "waive",
                    "new_text": None,
                    "grounds": "No city-level counts survive for the period in any catalogue.",
                }
            ]
        return out


@pytest.fixture()
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer(responder=ProposingResponder()).start()
    yield srv
    srv.stop()


def factory(srv: ScriptedServer) -> Callable[[], contextlib.AbstractContextManager[Any]]:
    @contextlib.contextmanager
    def make() -> Iterator[ModelClient]:
        yield ModelClient(
            base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
        )

    return make


def curator_up(app: Any) -> bool:
    """The curator screen is on top and mounted: pushed is not enough under load, its
    widgets come with the mount (a query before it found no DataTable)."""
    return isinstance(app.screen, CuratorScreen) and app.screen.is_mounted


async def wait_for(pilot, cond: Callable[[], bool], what: str, limit: int = 1200) -> None:  # type: ignore[no-untyped-def]
    for _ in range(limit):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never happened: {what}")


def journal(path: Path) -> list[Any]:
    with Ledger.open(path) as led:
        return led.events()


async def test_human_curated_run_of_three_sessions(tmp_path: Path, server: ScriptedServer) -> None:
    path = tmp_path / "ws" / "ledgers" / "curated"
    Ledger.create(
        path,
        RunMeta(
            name="curated",
            seed="Did the printing press cause the Reformation?",
            config="C+cur",
            contract="pilot-02",
            curator="human",
        ),
    ).close()
    req = RunRequest(ledger=path, sessions=3, curator="alice", client_factory=factory(server))
    app = make_app(tmp_path / "ws", run=req, curator_name="alice")
    async with app.run_test(size=(150, 45)) as pilot:
        assert isinstance(app.screen, RunMonitorScreen)
        await wait_for(pilot, lambda: curator_up(app), "curator after s1")
        cur = app.screen
        assert isinstance(cur, CuratorScreen) and cur.after == 1
        # 1. a priority change on the second row of the queue
        table = cur.query_one(DataTable)
        await pilot.press("down")
        target = cur.current_id()
        await pilot.press("p")
        assert isinstance(app.screen, ReasonScreen)
        await pilot.press("enter")  # priority 1 (default) → reason field
        await pilot.press("enter")  # empty reason: refused, the form stays
        assert isinstance(app.screen, ReasonScreen)
        await pilot.press(*"newest line first", "enter")
        await wait_for(
            pilot,
            lambda: any(e.kind == "curator_priority_set" for e in journal(path)),
            "priority event",
        )
        await wait_for(pilot, lambda: cur.rows and cur.rows[0]["id"] == target, "queue re-ordered")
        # 2. the pending downgrade: approve with grounds (a too-short one is refused first)
        await pilot.press("d")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, DowngradesScreen) and bool(app.screen.pending),
            "pending list",
        )
        await pilot.press("a")
        assert isinstance(app.screen, DecideScreen)
        await pilot.press(*"ok fine", "ctrl+s")
        assert isinstance(app.screen, DecideScreen)  # not a sentence: not submitted
        await pilot.press(*" - the catalogues were checked and hold no such counts.", "ctrl+s")
        await wait_for(
            pilot,
            lambda: any(e.kind == "downgrade_decided" for e in journal(path)),
            "downgrade decided",
        )
        await pilot.press("escape")
        assert app.screen is cur
        await pilot.press("ctrl+n")
        await wait_for(
            pilot,
            lambda: curator_up(app) and app.screen.after == 2,
            "curator after s2",
        )
        cur = app.screen
        assert isinstance(cur, CuratorScreen)
        table = cur.query_one(DataTable)
        # 3. merge the last open node into q1
        open_rows = [i for i, n in enumerate(cur.rows) if n["status"] == "open" and n["id"] != "q1"]
        table.move_cursor(row=open_rows[-1])
        merged = cur.current_id()
        await pilot.press("M")
        assert isinstance(app.screen, ReasonScreen)
        await pilot.press(*"q1", "tab", "tab", *"same question as the seed", "ctrl+s")
        await wait_for(pilot, lambda: any(e.kind == "nodes_merged" for e in journal(path)), "merge")
        # 4. archive another open node
        await wait_for(
            pilot,
            lambda: merged not in [n["id"] for n in cur.rows if n["status"] == "open"],
            "refreshed",
        )
        open_rows = [i for i, n in enumerate(cur.rows) if n["status"] == "open" and n["id"] != "q1"]
        table.move_cursor(row=open_rows[-1])
        archived = cur.current_id()
        await pilot.press("X", *"off the seed's line", "enter")
        await wait_for(
            pilot,
            lambda: any(
                e.kind == "status_changed" and e.data["to"] == "archived" for e in journal(path)
            ),
            "archive",
        )
        await pilot.press("ctrl+n")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, RunMonitorScreen) and app.screen.finished,
            "run done",
        )
        assert req.result is not None and req.result.sessions_done == 3 and not req.result.failed
        await pilot.pause()
        footer_actions = {b.action for _, b, *_ in app.screen.active_bindings.values()}
        assert "stop" not in footer_actions and "browse" in footer_actions
        assert app.screen.check_action("stop", ()) is False  # no stale "Stop run" (item 8)
        assert "Stop run" not in [
            str(getattr(k, "description", "")) for k in app.screen.query("FooterKey")
        ]

    events = journal(path)
    human = {e.kind: e for e in events if e.actor == "human:alice"}
    assert human["curator_priority_set"].node == target
    assert human["nodes_merged"].node == merged and human["nodes_merged"].data["into"] == "q1"
    assert (
        human["status_changed"].node == archived
        and human["status_changed"].data["to"] == "archived"
    )
    assert human["downgrade_decided"].data["decision"] == "approve"
    assert "catalogues were checked" in human["downgrade_decided"].data["grounds"]
    with Ledger.open(path) as led:
        assert led.last_session == 3
        stages = [(s, st) for s, st, _ in led.snapshot_index()]
        assert (1, "curator") in stages and (2, "curator") in stages
        assert requirements(led.node("q1"))[0]["status"] == "waived"
    assert verify(path).ok


async def test_quitting_mid_run_leaves_a_resumable_ledger(
    tmp_path: Path, server: ScriptedServer
) -> None:
    path = tmp_path / "ws" / "ledgers" / "quit"
    Ledger.create(
        path,
        RunMeta(name="quit", seed="Seed?", config="C+cur", contract="pilot-02", curator="human"),
    ).close()
    req = RunRequest(ledger=path, sessions=3, curator="bob", client_factory=factory(server))
    app = make_app(tmp_path / "ws", run=req, curator_name="bob")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: curator_up(app), "curator after s1")
        await pilot.press("ctrl+q")
    report = verify(path)
    assert report.ok, report.summary()
    with Ledger.open(path) as led:
        assert led.last_session == 1


async def test_a_failed_session_is_reported_and_the_run_stops_resumable(tmp_path: Path) -> None:
    from curiosity_tui.offline.scripted_server import Script, ScriptRule

    script = Script(rules=[ScriptRule(kind="deliverable", session=2, fault="http_500")])
    srv = ScriptedServer(script, responder=DemoResponder()).start()
    try:
        path = tmp_path / "ws" / "ledgers" / "failing"
        Ledger.create(
            path,
            RunMeta(
                name="failing", seed="Seed?", config="C+cur", contract="pilot-02", curator="human"
            ),
        ).close()
        req = RunRequest(ledger=path, sessions=3, curator="eve", client_factory=factory(srv))
        app = make_app(tmp_path / "ws", run=req, curator_name="eve")
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: curator_up(app), "curator after s1")
            await pilot.press("ctrl+n")
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, RunMonitorScreen) and app.screen.finished,
                "stop",
            )
            monitor = app.screen
            assert isinstance(monitor, RunMonitorScreen) and monitor.phase == "failed"
            assert req.result is not None and req.result.failed[0][0] == 2
            assert any(
                n.severity == "error" and "Session 2 failed" in n.message
                for n in app._notifications
            )
    finally:
        srv.stop()
    assert verify(path).ok
    with Ledger.open(path) as led:
        assert led.last_session == 1 and [f["session"] for f in led.failed_sessions()] == [2]


async def test_a_human_curated_run_keeps_the_command_lines_caps(
    tmp_path: Path, server: ScriptedServer
) -> None:
    """``run --curator human --cap candidate=77 --schema-dialect full``: the app-hosted run sends
    the candidate calls with the cap and the full dialect (issue 11: they were ignored)."""
    path = tmp_path / "ws" / "ledgers" / "capped"
    Ledger.create(
        path,
        RunMeta(name="capped", seed="Seed?", config="C+cur", contract="pilot-02", curator="human"),
    ).close()
    req = RunRequest(
        ledger=path,
        sessions=1,
        curator="carol",
        client_factory=factory(server),
        overrides={"candidate_cap": 77, "schema_dialect": "full"},
    )
    app = make_app(tmp_path / "ws", run=req, curator_name="carol")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: req.result is not None or req.error is not None, "run end")
    assert req.error is None and req.result.sessions_done == 1
    with Ledger.open(path) as led:
        calls = [c for r in led.session_records() for c in r.calls]
    cands = [c for c in calls if c.kind.startswith("candidate")]
    assert cands and {c.max_tokens for c in cands} == {77}
    assert {c.schema_dialect for c in calls if c.schema_dialect} == {"full"}
