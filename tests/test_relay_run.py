"""A relayed run against two scripted models: each session to its mind, the ledger verifies, the
records name their minds, audit and metrics work on it; a person's session via a stand-in."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from relay_fixtures import (
    minds,
    new_ledger,
    plan_over,
    relay_meta,
    stand_in_human,
    stopping_human,
    two_servers,
)

from curiosity_tui.analysis.relay_tables import relay_rows, transition_rows
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.cli import main
from curiosity_tui.errors import InputError
from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.runs.relay_runner import run_relay


def _journal_kinds(path: Path) -> list[dict[str, object]]:
    lines = (path / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def test_model_a_b_a_relay_of_four_c_sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with two_servers() as (a, b):
        plan = plan_over(a, b, ["model:A", "model:B", "model:A", "model:A"])
        urls = {a.base_url.removesuffix("/v1"), b.base_url.removesuffix("/v1")}
        led = new_ledger(tmp_path, "abaa")
        try:
            res = asyncio.run(run_relay(led, minds(plan), sessions=4))
            records = led.session_records()
            run = RunData.from_ledger(led)
        finally:
            led.close()
    assert res.sessions_done == 4 and not res.failed
    assert verify(tmp_path / "abaa").ok
    assert [(r.mind.kind, r.mind.name) for r in records if r.mind] == [
        ("model", "model-a"),
        ("model", "model-b"),
        ("model", "model-a"),
        ("model", "model-a"),
    ]
    endpoints = {r.mind.endpoint for r in records if r.mind}
    assert endpoints == urls
    # each model's calls went to its own server
    assert {q.session for q in a.requests if q.session} >= {1, 3, 4}
    assert {q.session for q in b.requests if q.session} >= {2}
    assert 2 not in {q.session for q in a.requests if q.kind != "curator"}
    rows = relay_rows(run)
    assert [r.transition for r in rows] == ["first", "other_model", "other_model", "same_model"]
    assert all(0.0 <= r.drift <= 1.0 for r in rows)
    kinds = {t.transition: t for t in transition_rows([run])}
    assert kinds["other_model"].handovers == 2 and kinds["same_model"].handovers == 1

    assert main(["audit", str(tmp_path / "abaa")]) in (0, 1)
    capsys.readouterr()
    assert main(["metrics", str(tmp_path / "abaa")]) == 0
    out = capsys.readouterr().out
    assert "relay_drift_step_mean" in out and "| 4 | model:model-a@" in out


def test_a_person_between_models(tmp_path: Path) -> None:
    with two_servers() as (a, b):
        plan = plan_over(a, b, ["model:A", "human:ana", "model:B", "model:A"])
        led = new_ledger(tmp_path, "ahba")
        try:
            res = asyncio.run(run_relay(led, minds(plan, stand_in_human), sessions=4))
            records = led.session_records()
            run = RunData.from_ledger(led)
        finally:
            led.close()
    assert res.sessions_done == 4 and verify(tmp_path / "ahba").ok
    assert [r.mind.kind if r.mind else None for r in records] == [
        "model",
        "human",
        "model",
        "model",
    ]
    assert records[1].calls == []  # the model curator's calls went to the next model session
    assert any(c.kind == "curator" for c in records[2].calls)
    kinds = [r.transition for r in relay_rows(run)]
    assert kinds == ["first", "model_to_human", "human_to_model", "other_model"]


def test_a_person_who_stops_stops_the_run_and_it_resumes(tmp_path: Path) -> None:
    with two_servers() as (a, b):
        plan = plan_over(a, b, ["model:A", "human:ana", "model:B"])
        led = new_ledger(tmp_path, "stop")
        try:
            res = asyncio.run(run_relay(led, minds(plan, stopping_human), sessions=3))
            assert res.sessions_done == 1 and res.failed[0][0] == 2
            assert led.last_session == 1
            again = asyncio.run(run_relay(led, minds(plan, stand_in_human), sessions=3))
        finally:
            led.close()
    assert again.sessions_done == 3 and verify(tmp_path / "stop").ok


def test_refusals_before_anything_runs(tmp_path: Path) -> None:
    with two_servers() as (a, b):
        plan = plan_over(a, b, ["model:A", "human:ana"])
        led = new_ledger(tmp_path, "nohook")
        try:
            with pytest.raises(InputError, match="session 2 is human:ana's"):
                asyncio.run(run_relay(led, minds(plan), sessions=2))
            with pytest.raises(InputError, match="names 2 session"):
                asyncio.run(run_relay(led, minds(plan, stand_in_human), sessions=3))
            assert led.last_session == 0
        finally:
            led.close()
        bare = Ledger.create(tmp_path / "bare", relay_meta("bare", config="B"))
        try:
            with pytest.raises(InputError, match="no store"):
                asyncio.run(run_relay(bare, minds(plan, stand_in_human), sessions=2))
        finally:
            bare.close()


def _relay_file(tmp: Path, a_url: str, b_url: str, extra: str = "") -> Path:
    p = tmp / "relay.toml"
    p.write_text(
        'sessions = ["model:A", "model:B"]\n'
        f"{extra}"
        f'[models.A]\nbase_url = "{a_url}"\nmodel = "model-a"\n'
        f'[models.B]\nbase_url = "{b_url}"\nmodel = "model-b"\n',
        encoding="utf-8",
    )
    return p


def test_run_relay_cli_probes_each_model_and_records_both_endpoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with two_servers() as (a, b):
        relay = _relay_file(tmp_path, a.base_url, b.base_url)
        new_ledger(tmp_path, "cli").close()
        rc = main(["run", str(tmp_path / "cli"), "--sessions", "2", "--relay", str(relay)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "endpoint A (model-a)" in out and "endpoint B (model-b)" in out
    assert "session 2 taken by model:model-b" in out
    probed = [e for e in _journal_kinds(tmp_path / "cli") if e["kind"] == "endpoint_probed"]
    assert {e["data"]["model"] for e in probed} == {"model-a", "model-b"}  # type: ignore[index]
    assert verify(tmp_path / "cli").ok


def test_run_relay_cli_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new_ledger(tmp_path, "bad").close()
    relay = tmp_path / "relay.toml"
    relay.write_text('sessions = ["human:ana", "robot:x"]\n', encoding="utf-8")
    rc = main(["run", str(tmp_path / "bad"), "--sessions", "2", "--relay", str(relay)])
    err = capsys.readouterr().err
    assert rc != 0 and "sessions" in err and "robot:x" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    relay = _relay_file(tmp_path, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", extra="")
    text = relay.read_text(encoding="utf-8").replace(
        'model = "model-a"\n', 'model = "model-a"\napi_key_env = "CURIOSITY_TEST_NO_SUCH_KEY"\n'
    )
    relay.write_text(text, encoding="utf-8")
    rc = main(["run", str(tmp_path / "bad"), "--sessions", "2", "--relay", str(relay)])
    err = capsys.readouterr().err
    assert rc != 0 and "$CURIOSITY_TEST_NO_SUCH_KEY is not set" in err
    with Ledger.open(tmp_path / "bad") as led:
        assert led.last_session == 0


def test_demo_relay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--relay", "--out", str(tmp_path), "--sessions", "3"]) == 0
    out = capsys.readouterr().out
    assert "model:A -> model:B -> model:A" in out
    path = tmp_path / "demo-relay-C+cur-pilot-02"
    with Ledger.open(path) as led:
        names = [r.mind.name for r in led.session_records() if r.mind]
        endpoints = {r.mind.endpoint for r in led.session_records() if r.mind}
    assert names == ["scripted-a", "scripted-b", "scripted-a"]
    assert endpoints == {"scripted-a", "scripted-b"}
    assert verify(path).ok
