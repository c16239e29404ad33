"""Quitting right after a key leaves no coroutine unawaited (issue 13: ctrl+q just after `c`
printed "coroutine … never awaited" and exited 1). Every RuntimeWarning is recorded, after a
garbage collection, and must be absent; the filter also turns any that escape into errors."""

from __future__ import annotations

import contextlib
import gc
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.app import RatingApp, make_app
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.screens.curator import CuratorScreen

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@contextlib.contextmanager
def no_runtime_warnings() -> Iterator[None]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        yield
        gc.collect()
    bad = [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)]
    assert bad == []


async def test_c_then_ctrl_q_on_the_rating_screen(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), pack, seed=11)
    with no_runtime_warnings():
        app = RatingApp(pack, "ann")
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("b", *"typed", "escape", "c", "ctrl+q")
            await pilot.pause()
        assert app.return_code in (0, None)


def _client_factory(srv: ScriptedServer) -> Callable[[], contextlib.AbstractContextManager[Any]]:
    @contextlib.contextmanager
    def make() -> Iterator[ModelClient]:
        yield ModelClient(base_url=srv.base_url, api_key="sk-test", model="scripted")

    return make


async def test_continue_then_ctrl_q_on_the_curator_screen(tmp_path: Path) -> None:
    """``c`` continued the run on the curator screen (now ctrl+n, decision 185)."""
    from curiosity_tui.screens.monitor import RunRequest

    path = tmp_path / "ws" / "ledgers" / "curated"
    meta = RunMeta(
        name="curated",
        seed="Did the printing press cause the Reformation?",
        config="C+cur",
        contract="pilot-02",
        curator="human",
    )
    Ledger.create(path, meta).close()
    srv = ScriptedServer(responder=DemoResponder()).start()
    try:
        with no_runtime_warnings():
            req = RunRequest(
                ledger=path, sessions=3, curator="alice", client_factory=_client_factory(srv)
            )
            app = make_app(tmp_path / "ws", run=req, curator_name="alice")
            async with app.run_test(size=(150, 45)) as pilot:
                for _ in range(1200):
                    if isinstance(app.screen, CuratorScreen) and app.screen.is_mounted:
                        break
                    await pilot.pause(0.05)
                assert isinstance(app.screen, CuratorScreen)
                await pilot.press("c", "ctrl+n", "ctrl+q")
                await pilot.pause()
    finally:
        srv.stop()
    with Ledger.open(path) as led:
        assert led.last_session >= 1


def test_quit_right_after_continue_in_a_real_terminal(tmp_path: Path) -> None:
    """The real loop closes when the app exits (run_test's does not): continue the curated run
    (the key that was ``c``), quit at once, and nothing is reported unawaited."""
    import subprocess
    import sys
    import time

    from test_rating_pty import Term

    led = tmp_path / "led"
    subprocess.run(
        [sys.executable, "-m", "curiosity_tui", "ledger", "new", str(led), "--seed", "Why?"]
        + ["--curator", "human"],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    t = Term(
        ["run", str(led), "--sessions", "3", "--curator", "human", "--curator-name", "tess"]
        + ["--scripted"]
    )
    try:
        t.wait_for(r"your turn to curate", 60)
        t.send("c\x0e\x11", 0)
        end = time.monotonic() + 60
        while t.proc.poll() is None and time.monotonic() < end:
            t.read(0.2)
        t.read(0.5)
    finally:
        if t.proc.poll() is None:
            t.kill()
    assert t.proc.returncode == 1, t.screen[-400:]  # stopped early: resumable, by design
    assert "stopped with 1 of 3 session(s) committed" in t.screen
    assert "never awaited" not in t.screen and "Traceback" not in t.screen
