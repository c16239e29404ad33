"""Forced focus: the head of the queue (curator priority first), and the pilot-02 option of a
queue that cannot re-select the previous focus."""

from __future__ import annotations

import asyncio
from pathlib import Path

from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.ledger.queue import select_focus
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import run_ledger


def node(
    nid: str, created: int, resurfaced: list[int], status: str = "open", prio: int | None = None
) -> dict:
    return {
        "id": nid,
        "created": created,
        "resurfaced": resurfaced,
        "status": status,
        "curator_priority": prio,
    }


def test_queue_head_is_the_focus_and_reselects_without_the_option() -> None:
    # q1 worked in sessions 1..3; at t=4: e^-1 + e^-2/3 + e^-1/3 ≈ 1.5 > q2's e^-1/3 ≈ 0.72
    nodes = [node("q1", 0, [1, 2, 3]), node("q2", 1, [3]), node("q3", 2, [])]
    assert select_focus(nodes, 4) == "q1"
    assert select_focus(nodes, 4, previous_focus="q1") == "q1"  # the pilot-01 queue re-selects


def test_no_reselect_skips_previous_focus_for_the_next_in_queue() -> None:
    nodes = [node("q1", 0, [1, 2, 3]), node("q2", 1, [3]), node("q3", 2, [])]
    assert select_focus(nodes, 4, previous_focus="q1", no_reselect=True) == "q2"
    # with only the previous focus open, it is selected again rather than nothing
    assert select_focus([node("q1", 0, [1])], 2, previous_focus="q1", no_reselect=True) == "q1"


def test_curator_priority_orders_first_and_only_when_used() -> None:
    nodes = [node("q1", 0, [1, 2, 3]), node("q2", 1, [], prio=2), node("q3", 2, [], prio=1)]
    assert select_focus(nodes, 4) == "q3"
    assert select_focus(nodes, 4, use_curator=False) == "q1"
    assert select_focus(nodes, 4, previous_focus="q3", no_reselect=True) == "q2"


def test_dormant_and_closed_nodes_are_never_the_focus() -> None:
    nodes = [
        node("q1", 0, [1, 2, 3], status="closed"),
        node("q2", 1, [3], status="dormant"),
        node("q3", 0, []),
    ]
    assert select_focus(nodes, 4) == "q3"
    assert select_focus([node("q1", 0, [], status="archived")], 2) is None


def _run(tmp_path: Path, no_reselect: bool) -> list[str | None]:
    path = tmp_path / ("nr" if no_reselect else "std")
    meta = RunMeta(
        name=path.name, seed="Seed?", config="C-cur", contract="pilot-02", no_reselect=no_reselect
    )
    with ScriptedServer(responder=DemoResponder()) as srv:
        client = ModelClient(
            base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
        )
        with Ledger.create(path, meta) as led:

            async def go():  # type: ignore[no-untyped-def]
                try:
                    return await run_ledger(led, client, sessions=4)
                finally:
                    await client.aclose()

            assert not asyncio.run(go()).failed
            return [r.focus for r in led.session_records()]


def test_runs_with_and_without_no_reselect(tmp_path: Path) -> None:
    std = _run(tmp_path, False)
    nr = _run(tmp_path, True)
    assert any(a == b for a, b in zip(std, std[1:], strict=False))  # the automatic queue pins
    assert all(a != b for a, b in zip(nr, nr[1:], strict=False))  # the option never repeats
