"""The curator's merge picker and taking an action back, by keys (decision 444): ↓/↑ in the
filter move the pick, the chosen target is echoed before submit, text typed on the list goes
on in the reason, a merge is taken back with z and redone; merged nodes can be shown (w);
the status line names the keys that are bound. Each flow also as one burst of keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger
from curiosity_tui.offline.synthetic_ledgers import make_run
from curiosity_tui.screens.curator import CuratorScreen
from curiosity_tui.screens.reason import ReasonScreen


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _open_ids(led: Ledger) -> list[str]:
    return sorted(
        (n["id"] for n in led.raw_nodes().values() if n["status"] == "open" and n["id"] != "q1"),
        key=lambda x: int(x[1:]),
    )


async def _cursor_to(pilot, screen: CuratorScreen, nid: str) -> None:  # type: ignore[no-untyped-def]
    table = screen.query_one("#cur-queue", DataTable)
    table.move_cursor(row=table.get_row_index(nid))
    await pilot.pause()


def _merges(led: Ledger, node: str) -> list[tuple[str, str]]:
    return [
        (e.data["into"], e.data["reason"])
        for e in led.events(node)
        if e.kind == "nodes_merged" and e.node == node
    ]


@pytest.mark.parametrize("burst", [False, True])
async def test_merge_picked_with_down_taken_back_and_redone(tmp_path: Path, burst: bool) -> None:
    path = make_run(tmp_path / "run", "C+cur", seed=5, sessions=2)
    led = Ledger.open(path, write=True)
    app = make_app(tmp_path, curator_name="ann")

    async def keys(pilot, *ks: str) -> None:  # type: ignore[no-untyped-def]
        if burst:
            await pilot.press(*ks)
        else:
            for k in ks:
                await pilot.press(k)
        await settle(pilot)

    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            screen = CuratorScreen(led, 2, "human:ann", lambda: None)
            await app.push_screen(screen)
            await settle(pilot)
            status = str(screen.query_one("#cur-status", Static).render())
            assert "c continues" not in status
            assert f"{screen.key_for('curator.continue')} continues with session 3" in status
            assert screen.key_for("curator.continue") == app.get_key_display(
                next(b for b in CuratorScreen.BINDINGS if b.id == "curator.continue")
            )
            node = _open_ids(led)[0]
            await _cursor_to(pilot, screen, node)
            # the picker: ↓ from the filter moves the pick; the target is echoed
            await keys(pilot, "M")
            form = app.screen
            assert isinstance(form, ReasonScreen)
            first = form.chosen_target()
            await keys(pilot, "down")
            second = form.chosen_target()
            assert first is not None and second is not None and second != first
            echo = str(form.query_one("#form-target-echo", Static).render())
            assert echo.startswith(f"→ {second[0]} · ")
            # Enter goes to the list; text typed there goes on in the reason
            await keys(pilot, "enter", *"same question", "enter")
            assert not isinstance(app.screen, ReasonScreen)
            assert _merges(led, node) == [(second[0], "same question")]
            # taken back with z: the latest action is picked first
            await keys(pilot, "z")
            assert isinstance(app.screen, ReasonScreen)
            assert app.screen.chosen_target() is not None
            await keys(pilot, "enter", *"wrong target", "enter")
            n = led.raw_nodes()[node]
            assert n["status"] == "open" and n["merged_into"] is None
            reverted = [e for e in led.events(node) if e.kind == "curator_reverted"]
            assert len(reverted) == 1 and reverted[0].actor == "human:ann"
            assert reverted[0].data["reason"] == "wrong target"
            # redone, the target typed into the filter
            target = _open_ids(led)[-1]
            await _cursor_to(pilot, screen, node)
            await keys(pilot, "M", *target, "enter", "enter", *"dup", "enter")
            assert _merges(led, node)[-1] == (target, "dup")
            # merged nodes are reachable: w shows them in the list
            table = screen.query_one("#cur-queue", DataTable)
            assert node not in [r.value for r in table.rows]
            await keys(pilot, "w")
            assert node in [r.value for r in table.rows]
    finally:
        led.close()
    with Ledger.open(path) as again:
        assert again.verify().ok
