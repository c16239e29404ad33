"""Closing the app while a human-curated run waits for its curator (issue 25; the Textual
shutdown race): nothing the run's thread sends after the screens are gone may query them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.screens.curator import CuratorScreen
from curiosity_tui.screens.monitor import RunMonitorScreen, RunRequest


@pytest.fixture()
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer(responder=DemoResponder()).start()
    yield srv
    srv.stop()


def _factory(srv: ScriptedServer) -> Callable[[], contextlib.AbstractContextManager[Any]]:
    @contextlib.contextmanager
    def make() -> Iterator[ModelClient]:
        yield ModelClient(
            base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
        )

    return make


def _curated(tmp_path: Path) -> Path:
    path = tmp_path / "ws" / "ledgers" / "curated"
    meta = RunMeta(
        name="curated",
        seed="Did the printing press cause the Reformation?",
        config="C+cur",
        contract="pilot-02",
        curator="human",
    )
    Ledger.create(path, meta).close()
    return path


async def test_quit_while_the_run_waits_for_the_curator(
    tmp_path: Path, server: ScriptedServer
) -> None:
    path = _curated(tmp_path)
    req = RunRequest(ledger=path, sessions=3, curator="alice", client_factory=_factory(server))
    app = make_app(tmp_path / "ws", run=req, curator_name="alice")
    async with app.run_test(size=(150, 45)) as pilot:
        assert isinstance(app.screen, RunMonitorScreen)
        for _ in range(1200):
            if isinstance(app.screen, CuratorScreen) and app.screen.is_mounted:
                break
            await pilot.pause(0.05)
        assert isinstance(app.screen, CuratorScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code in (0, None)
    assert verify(path).ok


@pytest.mark.parametrize("quit_first", [True, False], ids=["quit-then-ask", "ask-then-quit"])
async def test_quit_as_the_curator_screen_is_asked_for(
    tmp_path: Path, server: ScriptedServer, quit_first: bool
) -> None:
    """The run's thread asks for the curator screen in the same moment the person quits: the
    quit reaches the app first, the request right after it, before the shutdown begins (a
    real race, made certain here by running both in one turn of the app's loop). Nothing may be pushed
    or queried then: before the fix the curator screen was pushed on the exiting app and its
    mount raised NoMatches (DataTable; HeaderTitle from the header's title watcher). The other
    order — the screen pushed, the quit in the same turn — tears the screen down while it
    mounts: its mount must not touch widgets being removed."""
    path = _curated(tmp_path)
    req = RunRequest(ledger=path, sessions=3, curator="alice", client_factory=_factory(server))
    app = make_app(tmp_path / "ws", run=req, curator_name="alice")
    to_app = app.call_from_thread
    quits: list[str] = []

    def racing(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        names = {getattr(f, "__name__", "") for f in (fn, *args)}
        if "_open_curator" in names and not quits:
            quits.append("sent")

            def both() -> Any:  # one turn of the app's loop: the quit and the call
                if quit_first:
                    app.exit()
                    return fn(*args, **kwargs)
                out = fn(*args, **kwargs)
                app.exit()
                return out

            return to_app(both)
        return to_app(fn, *args, **kwargs)

    app.call_from_thread = racing  # type: ignore[method-assign]
    async with app.run_test(size=(150, 45)) as pilot:
        for _ in range(1200):
            if quits:
                break
            await pilot.pause(0.05)
    assert quits == ["sent"]
    assert app.return_code in (0, None)
    assert req.cancelled
    assert verify(path).ok
