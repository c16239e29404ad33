"""End-to-end: each of the six configurations runs five sessions against the scripted server,
through the real openai client; the ledgers verify and the protocol's invariants hold."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.protocol.configs import CONFIG_NAMES
from curiosity_tui.protocol.schemas import INTERNAL_KINDS
from curiosity_tui.runs.runner import plan_runs, run_pilot

SEED = "Did the printing press cause the Reformation?"


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ScriptedServer]:
    out = tmp_path_factory.mktemp("pilot")
    srv = ScriptedServer(responder=DemoResponder()).start()
    client = ModelClient(
        base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
    )
    specs = plan_runs(seed=SEED, configurations=list(CONFIG_NAMES), runs=1, contract="pilot-02")

    async def go():  # type: ignore[no-untyped-def]
        try:
            return await run_pilot(specs, out, client, sessions=5, concurrency=6)
        finally:
            await client.aclose()

    results = asyncio.run(go())
    srv.stop()
    assert all(not r.failed for r in results), [r.failed for r in results]
    return out, srv


@pytest.mark.parametrize("config", CONFIG_NAMES)
def test_each_configuration_runs_five_sessions_and_verifies(
    pilot: tuple[Path, ScriptedServer], config: str
) -> None:
    out, _ = pilot
    path = out / f"{config}-r0"
    report = verify(path)
    assert report.ok, report.summary()
    with Ledger.open(path) as led:
        records = led.session_records()
        assert [r.session for r in records] == [1, 2, 3, 4, 5]
        assert all(r.status == "committed" and r.config == config for r in records)
        if config in ("A", "B"):
            assert led.raw_nodes() == {}  # no store carried between sessions
            assert all(r.rendering == "" for r in records)
        else:
            assert len(led.raw_nodes()) > 1
            # every later session received a non-empty rendering of the store
            assert all("QUESTION LEDGER" in r.rendering for r in records)


@pytest.mark.parametrize("config", ["C+cur", "C-cur"])
def test_protocol_runs_show_focus_preserve_answer_and_bounds(
    pilot: tuple[Path, ScriptedServer], config: str
) -> None:
    out, _ = pilot
    with Ledger.open(out / f"{config}-r0") as led:
        records = led.session_records()
        # forced focus every session, and the focus was resurfaced in that session
        for r in records:
            assert r.focus is not None and r.counts.forced_focus
            assert r.session in led.node(r.focus)["resurfaced"]
        decisions = {r.decision for r in records}
        assert decisions == {"PRESERVE", "ANSWER"}
        # preserved candidates stored for each PRESERVE, with the session's Δ
        preserved = [
            (p["session"], p["delta"])
            for n in led.nodes()
            for p in n["preserved"]
            if p["reason"] == "preserve"
        ]
        for r in records:
            if r.decision == "PRESERVE":
                assert (r.session, r.delta) in preserved
                assert r.delta is not None and r.delta < -0.15
        # compulsory open layer: 1..3 living questions every session
        assert all(1 <= r.counts.open_layer <= 3 for r in records)
        # the embedder is named with every Δ and medoid choice
        assert all(r.embedder and r.medoid in (0, 1, 2) for r in records)


def test_token_accounting_sums_per_session_and_kind(pilot: tuple[Path, ScriptedServer]) -> None:
    out, _ = pilot
    with Ledger.open(out / "C+cur-r0") as led:
        for r in led.session_records():
            kinds = {c.kind for c in r.calls}
            assert {"candidate", "judge-before", "judge-after", "deliverable"} <= kinds
            assert sum(1 for c in r.calls if c.kind == "candidate") == 3
            internal = sum(c.completion_tokens for c in r.calls if c.kind in INTERNAL_KINDS)
            final = sum(c.completion_tokens for c in r.calls if c.kind == "deliverable")
            assert r.tokens(internal=True, curator=False) == internal
            assert r.tokens(internal=False, curator=False) == final
            assert internal + final <= 4000
            assert all(
                c.internal == (c.kind in INTERNAL_KINDS) for c in r.calls if c.kind != "curator"
            )
            assert all(c.completion_tokens <= 260 for c in r.calls if c.kind == "candidate")
        # the model curator's calls are counted separately, attached to the session they precede
        cur = [c for r in led.session_records() for c in r.calls if c.kind == "curator"]
        assert len(cur) == 4  # between sessions 1-2, 2-3, 3-4, 4-5
        assert {
            r.session for r in led.session_records() if any(c.kind == "curator" for c in r.calls)
        } == {2, 3, 4, 5}


def test_curated_runs_write_three_snapshots_per_curated_session(
    pilot: tuple[Path, ScriptedServer],
) -> None:
    out, _ = pilot
    with Ledger.open(out / "C+cur-r0") as led:
        stages = led.snapshot_index()
        per = {s: [st for (ss, st, _) in stages if ss == s] for s in range(1, 6)}
        assert per[1] == ["session", "decay", "curator"]
        assert per[5] == ["session", "decay"]  # no curator after the last session
    with Ledger.open(out / "C-cur-r0") as led:
        assert all(st != "curator" for _, st, _ in led.snapshot_index())


def test_requests_carry_call_and_session_headers(pilot: tuple[Path, ScriptedServer]) -> None:
    _, srv = pilot
    assert srv.requests
    for req in srv.requests:
        assert req.kind in {
            "answer",
            "self-ask",
            "candidate",
            "judge-before",
            "judge-after",
            "checker",
            "deliverable",
            "curator",
        }
        assert req.session is not None and 1 <= req.session <= 5


def test_deliverable_receives_rendering_and_selected_candidate_in_full(
    pilot: tuple[Path, ScriptedServer],
) -> None:
    out, _ = pilot
    with Ledger.open(out / "C-cur-r0") as led:
        for r in led.session_records():
            deliverable_input = r.inputs["deliverable"]
            assert r.rendering in deliverable_input
            selected = r.tension.candidates[r.medoid]
            assert selected in deliverable_input  # also when withheld (PRESERVE)


def test_session_input_is_the_rendering_of_the_previous_snapshot(
    pilot: tuple[Path, ScriptedServer],
) -> None:
    from curiosity_tui.ledger.render import render_session_input

    out, _ = pilot
    with Ledger.open(out / "C+cur-r0") as led:
        for r in led.session_records()[1:]:
            assert r.rendering == render_session_input(led.snapshot(r.session - 1), r.session)
