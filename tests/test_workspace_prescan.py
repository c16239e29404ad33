"""The workspace's first scan in a child process (decision 285): the child's result is the
in-process scan, field for field; anything else it prints, a failure or a timeout falls back
to the in-process scan; the workspace screen takes the pending scan once. (That the CLI starts
without the ledger stack, so that the child's import runs beside Textual's, is in
test_startup_imports.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from app_fixtures import build_workspace
from textual.widgets import DataTable

from curiosity_tui import workspace_prescan as pre
from curiosity_tui import workspace_scan as wsmod
from curiosity_tui.app import make_app
from curiosity_tui.screens.workspace import WorkspaceScreen

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_pending() -> Any:
    yield
    if (left := pre.take(Path("/"))) is not None:  # never leave a child behind
        left.discard()


def _child(code: str, root: Path) -> pre.Prescan:
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    return pre.Prescan(root.resolve(), proc)


def test_the_childs_scan_is_the_in_process_scan(tmp_path: Path) -> None:
    ws = build_workspace(tmp_path / "ws", ledgers=3)
    (ws / "ledgers" / "broken").mkdir()
    (ws / "ledgers" / "broken" / "journal.jsonl").write_text("not json\n")
    (ws / "packs" / "p1").mkdir()
    (ws / "packs" / "p1" / "manifest.json").write_text("{")
    (ws / "packs" / "p1" / "items.jsonl").write_text("")
    (ws / "packs" / "p1" / "ratings").mkdir()
    (ws / "packs" / "p1" / "ratings" / "ana.jsonl").write_text("")
    started = pre.start(ws)
    if started is None:  # one core: nothing is started, and the app scans itself
        assert pre._cores() < 2
        return
    got = started.result()
    assert got == wsmod.scan(ws.resolve())
    assert [s.name for s in got.ledgers] == ["broken", "example-pilot-01", "example-pilot-02",
                                             "run-02"]  # fmt: skip
    assert got.ledgers[0].error and got.packs[0].error and got.packs[0].raters == ["ana"]
    assert got.ledgers[1].counts and got.ledgers[1].modified > 0


def test_json_round_trip_and_what_it_refuses() -> None:
    ws = wsmod.scan(ROOT)
    assert ws.ledgers, "the bundled workspace has ledgers"
    text = wsmod.workspace_json(ws)
    assert wsmod.workspace_from_json(text) == ws
    assert wsmod.workspace_from_json(text.encode()) == ws
    good = json.loads(text)
    bad: list[Any] = [
        [],
        {**good, "extra": 1},
        {**good, "root": 3},
        {**good, "ledgers": {}},
    ]
    row = good["ledgers"][0]
    for field, value in [
        ("sessions", True),  # a bool is not an int here
        ("sessions", 1.0),
        ("counts", {"open": "2"}),
        ("running", 0),
        ("findings", "3"),
        ("error", 5),
        ("modified", "x"),
        ("path", None),
    ]:
        bad.append({**good, "ledgers": [{**row, field: value}]})
    bad.append({**good, "ledgers": [{k: v for k, v in row.items() if k != "seed"}]})
    bad.append({**good, "packs": [{"name": "p", "path": "/p", "items": 1}]})
    for case in bad:
        with pytest.raises(ValueError):
            wsmod.workspace_from_json(json.dumps(case))
    with pytest.raises(ValueError):
        wsmod.workspace_from_json("{")


def test_a_lone_surrogate_travels(tmp_path: Path) -> None:
    ws = wsmod.Workspace(
        root=tmp_path,
        ledgers=[wsmod.LedgerSummary(name="bad\udcff", path=tmp_path / "bad\udcff")],
        packs=[],
    )
    assert wsmod.workspace_from_json(wsmod.workspace_json(ws)) == ws


def test_a_failed_odd_or_slow_child_gives_none(tmp_path: Path) -> None:
    good = wsmod.workspace_json(wsmod.Workspace(root=tmp_path.resolve(), ledgers=[], packs=[]))
    assert _child(f"print({good!r})", tmp_path).result() is not None
    assert _child("print('garbage')", tmp_path).result() is None
    assert _child(f"import sys; print({good!r}); sys.exit(1)", tmp_path).result() is None
    other = wsmod.workspace_json(wsmod.Workspace(root=Path("/elsewhere"), ledgers=[], packs=[]))
    assert _child(f"print({other!r})", tmp_path).result() is None  # another root's scan
    slow = _child("import time; time.sleep(60)", tmp_path)
    assert slow.result(timeout=0.2) is None
    assert slow._proc.returncode is not None  # the child was ended


def test_turned_off_and_taken_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CURIOSITY_PRESCAN", "0")
    assert pre.start(tmp_path) is None and pre.take(tmp_path) is None
    monkeypatch.delenv("CURIOSITY_PRESCAN")
    monkeypatch.setattr(pre, "_cores", lambda: 2)
    first = pre.start(tmp_path)
    assert first is not None
    second = pre.start(tmp_path)  # a second start ends the first child
    assert first._proc.returncode is not None
    assert pre.take(tmp_path / "other") is None  # another root: ended, not given
    assert second is not None and second._proc.returncode is not None
    assert pre.start(tmp_path) is not None
    assert pre.take(tmp_path) is not None and pre.take(tmp_path) is None


async def _rows(root: Path) -> list[str]:
    app = make_app(root)
    async with app.run_test() as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            screen = app.screen
            if isinstance(screen, WorkspaceScreen) and screen.data is not None:
                break
        await app.workers.wait_for_complete()
        table = app.screen.query_one("#ledgers", DataTable)
        return [str(k.value) for k in table.rows]


async def test_the_screen_takes_the_pending_scan_once(tmp_path: Path) -> None:
    ws = build_workspace(tmp_path / "ws", ledgers=2)
    shown = wsmod.scan(ws.resolve())
    shown.ledgers = shown.ledgers[:1]  # what only the child says
    with pre._lock:
        pre._pending = _child(f"print({wsmod.workspace_json(shown)!r})", ws)
    assert await _rows(ws) == [str(shown.ledgers[0].path)]
    # nothing pending any more: the next app scans for itself
    assert len(await _rows(ws)) == 2


async def test_a_failed_child_falls_back_to_the_in_process_scan(tmp_path: Path) -> None:
    ws = build_workspace(tmp_path / "ws", ledgers=2)
    with pre._lock:
        pre._pending = _child("import sys; sys.exit(3)", ws)
    assert len(await _rows(ws)) == 2


def test_a_package_of_the_same_name_in_the_current_folder_is_not_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = build_workspace(tmp_path / "ws", ledgers=1)
    fake = tmp_path / "cwd" / "curiosity_tui"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise SystemExit(7)\n")
    monkeypatch.chdir(fake.parent)
    monkeypatch.setattr(pre, "_cores", lambda: 2)
    started = pre.start(ws)
    assert started is not None
    assert started.result() == wsmod.scan(ws.resolve())
