"""Every server, every dialect (issue 27 item 3): on a server that answers every request with a
random instance of the schema it was sent (tests/schema_server.py, independent of the scripted
server and of our rules), all six configurations under both contracts commit 3 sessions in the
strict and the full dialect with 0 repairs, and every ledger verifies; so do the server's
llama-cpp-python mode (500 for json_schema, a grammar from json_object's schema) and its
strict-hosted mode (400 for count, length and tuple keywords), each run after the endpoint
probe, as ``run`` does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.modelio.endpoint import EndpointOptions, prepare_endpoint
from curiosity_tui.protocol.configs import CONFIG_NAMES
from curiosity_tui.runs.runner import plan_runs, run_pilot
from tests.schema_server import SchemaServer

SEED = "Did the printing press cause the Reformation?"
SESSIONS = 3


def _run(out: Path, server: SchemaServer, contract: str, dialect: str | None) -> dict[str, Any]:
    specs = plan_runs(seed=SEED, configurations=list(CONFIG_NAMES), runs=1, contract=contract)
    client = ModelClient(
        base_url=server.base_url, api_key="sk-x", model="obedient", retry_backoff_s=0.001
    )

    async def go() -> tuple[Any, list[Any]]:
        try:
            caps = await prepare_endpoint(client, EndpointOptions())
            overrides = {"epsilon": 0.0, "schema_dialect": dialect}
            results = await run_pilot(
                specs,
                out,
                client,
                sessions=SESSIONS,
                concurrency=3,
                overrides=overrides,
                endpoint=caps,
            )
            return caps, results
        finally:
            await client.aclose()

    caps, results = asyncio.run(go())
    return {"caps": caps, "results": results}


def _ledgers_commit_without_repairs(out: Path, results: list[Any]) -> None:
    assert [(r.failed) for r in results] == [[]] * len(CONFIG_NAMES)
    runs = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(runs) == len(CONFIG_NAMES)
    for run in runs:
        assert verify(run).ok, run
        with Ledger.open(run) as led:
            records = led.session_records()
            assert len(records) == SESSIONS, run
            repaired = [(r.session, c.kind, c.error) for r in records for c in r.calls if c.repair]
            assert repaired == [], f"{run.name}: {repaired}"


@pytest.mark.parametrize("dialect", ["strict", "full"])
@pytest.mark.parametrize("contract", ["pilot-01", "pilot-02"])
def test_every_configuration_commits_on_a_schema_obedient_server(
    tmp_path: Path, contract: str, dialect: str
) -> None:
    with SchemaServer("obedient", seed=f"{contract}-{dialect}") as server:
        got = _run(tmp_path, server, contract, dialect)
    _ledgers_commit_without_repairs(tmp_path, got["results"])
    kinds = set(server.requests)
    wanted = {"answer", "self-ask", "candidate", "judge-before", "judge-after", "deliverable"}
    wanted |= {"curator"}  # the checker runs only where the focus has requirements by then
    assert wanted <= kinds, server.requests


@pytest.mark.parametrize("mode", ["llama-cpp-python", "strict-hosted"])
def test_the_probe_finds_a_way_and_every_configuration_commits(tmp_path: Path, mode: str) -> None:
    """No dialect is forced: the probe's choice is what the run uses."""
    with SchemaServer(mode, seed=7) as server:
        got = _run(tmp_path, server, "pilot-02", None)
    caps = got["caps"]
    if mode == "llama-cpp-python":
        assert (caps.response_format, caps.json_object_schema) == ("json_object", True)
    else:
        assert caps.response_format == "json_schema"
        assert caps.schema_dialect == "strict"
        assert any("minItems" in (t.detail or "") for t in caps.trials), caps.trials
    _ledgers_commit_without_repairs(tmp_path, got["results"])
    assert server.refusals.get("minItems", 0) <= 1  # the probe's one refused trial, at most


@pytest.mark.parametrize("dialect", ["strict", "full"])
@pytest.mark.parametrize("measure", ["pre-amendment", "four-component"])
def test_every_tension_measure_commits_on_a_schema_obedient_server(
    tmp_path: Path, measure: str, dialect: str
) -> None:
    """Issue 26: the re-listing judge-after (pre-amendment) and Δ per candidate with its extra
    judge-after calls commit on a server that knows nothing but the schema it is sent."""
    setting = {"measure": measure, "per_candidate": True, "service_sessions": [2]}
    specs = plan_runs(seed=SEED, configurations=["C-cur"], runs=1, options={"tension": setting})
    with SchemaServer("obedient", seed=f"{measure}-{dialect}") as server:
        client = ModelClient(
            base_url=server.base_url, api_key="sk-x", model="obedient", retry_backoff_s=0.001
        )

        async def go() -> list[Any]:
            try:
                caps = await prepare_endpoint(client, EndpointOptions())
                return await run_pilot(
                    specs,
                    tmp_path,
                    client,
                    sessions=SESSIONS,
                    overrides={"schema_dialect": dialect},
                    endpoint=caps,
                )
            finally:
                await client.aclose()

        results = asyncio.run(go())
    assert [r.failed for r in results] == [[]]
    run = tmp_path / "C-cur-r0"
    assert verify(run).ok
    with Ledger.open(run) as led:
        records = led.session_records()
    assert len(records) == SESSIONS
    assert [c.kind for r in records for c in r.calls if c.repair] == []
    for r in records:
        assert r.tension is not None and r.tension.measure == measure
        assert r.tension.per_candidate is not None and len(r.tension.per_candidate) == 3
        assert r.decided is not None
    assert records[1].decided is not None and records[1].decided.kind == "service"
    assert records[1].decision == "ANSWER"
