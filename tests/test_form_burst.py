"""The curator's forms and the downgrade decision form, typed in one burst (no delay between
keys): what is recorded is exactly what was typed. The forms are opened through the curator
and downgrade screens' own keys, so the key that opens a form and the keys typed into it can
arrive together."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from app_fixtures import build_workspace
from textual.widgets import Static

from curiosity_tui.app.navigator import Navigation
from curiosity_tui.ledger import Ledger
from curiosity_tui.screens.curator import CuratorScreen
from curiosity_tui.screens.downgrades import DowngradesScreen
from curiosity_tui.screens.reason import ActionForm, ReasonScreen
from tests.keyburst import burst, keys_of

SIZE = (150, 45)


class Host(Navigation):
    """A bare host that can open the curator's and the downgrade's forms (the navigator)."""

    def __init__(self, first: Any) -> None:
        super().__init__()
        self.first = first
        self.results: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self.first, self.results.append)


def ledger_copy(tmp_path: Path) -> Path:
    ws = build_workspace(tmp_path / "example", markup=False)
    copy = tmp_path / "curated"
    shutil.copytree(
        ws / "ledgers" / "example-pilot-02", copy, ignore=shutil.ignore_patterns("writer.lock")
    )
    return copy


def journal(path: Path) -> list[Any]:
    with Ledger.open(path) as led:
        return list(led.events())


async def test_reason_form_with_priority_in_one_burst() -> None:
    app = Host(ReasonScreen("Set priority", priority=True, priority_default=1))
    async with app.run_test(size=SIZE) as pilot:
        await burst(pilot, keys_of("3", "enter", "the seed's own line comes first", "enter"))
    assert app.results == [ActionForm(reason="the seed's own line comes first", priority=3)]


async def test_merge_form_filter_pick_and_reason_in_one_burst() -> None:
    targets = [
        ("q1", "Did the press cause it?"),
        ("q2", "Which towns printed most?"),
        ("q3", "Who read the pamphlets?"),
    ]
    app = Host(ReasonScreen("Merge q9", targets=targets))
    async with app.run_test(size=SIZE) as pilot:
        await burst(
            pilot,
            keys_of("town", "backspace", "enter", "enter", "same question, asked twice", "enter"),
        )
    assert app.results == [ActionForm(reason="same question, asked twice", target="q2")]


async def test_curator_priority_opened_and_filled_in_one_burst(tmp_path: Path) -> None:
    path = ledger_copy(tmp_path)
    led = Ledger.open(path, write=True)
    try:
        app = Host(CuratorScreen(led, 3, "human:alice", lambda: None))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            target = app.screen.current_id()
            await burst(pilot, keys_of("p", "2", "enter", "newest line first, please", "enter"))
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(app.screen, CuratorScreen)
    finally:
        led.close()
    ev = [e for e in journal(path) if e.kind == "curator_priority_set"]
    assert len(ev) == 1 and ev[0].node == target and ev[0].actor == "human:alice"
    assert ev[0].data["priority"] == 2
    assert ev[0].data["reason"] == "newest line first, please"


async def test_downgrade_decided_in_one_burst_letters_never_decide(tmp_path: Path) -> None:
    path = ledger_copy(tmp_path)
    app = Host(DowngradesScreen(path))
    app.curator_name = "carol"  # type: ignore[attr-defined]
    grounds = "Two regional studies exist; a reader can approve nothing here."
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        # x opens the form as Reject; the a's and x's in the grounds must not flip it
        await burst(pilot, keys_of("x", grounds, "ctrl+s"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, DowngradesScreen)
    ev = [e for e in journal(path) if e.kind == "downgrade_decided"]
    assert len(ev) == 1 and ev[0].actor == "human:carol"
    assert ev[0].data["decision"] == "reject" and ev[0].data["grounds"] == grounds


async def test_decision_row_switches_only_with_its_own_focus(tmp_path: Path) -> None:
    path = ledger_copy(tmp_path)
    app = Host(DowngradesScreen(path))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await burst(pilot, keys_of("x", "shift+tab", "a", "Approved: the catalogues were read"))
        form = app.screen
        assert form.decision == "approve"  # type: ignore[attr-defined]
        body = form.query_one("#decide-grounds").text  # type: ignore[attr-defined]
        assert body == "Approved: the catalogues were read"
        assert "APPROVE" not in str(form.query_one("#decide-error", Static).render())
