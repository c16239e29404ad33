"""The report's two §5 episodes, replayed through the real runner against the scripted server
under both contracts: the committed example ledgers are what the scripts produce, and under
pilot-02 neither defective transition happens."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest

from curiosity_tui.contract.audit import audit
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.models import ContractName
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.episodes import EPISODES, GRABE_EVIDENCE, PAMPHLETS, SUPPRESSION
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.protocol.configs import get_configuration
from curiosity_tui.runs.runner import run_ledger

REPO = Path(__file__).resolve().parents[1]
SEED = "Did the printing press cause the Reformation?"
RUNS = [(e, c) for e in ("grabe", "suppression") for c in ("pilot-01", "pilot-02")]


def _name(episode: str, contract: str) -> str:
    return f"episode-{episode}-{contract.replace('-', '')}"


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    out = tmp_path_factory.mktemp("replays")
    paths: dict[tuple[str, str], Path] = {}

    async def one(episode: str, contract: str) -> None:
        responder_cls, config = EPISODES[episode]
        name = _name(episode, contract)
        meta = RunMeta(
            name=name,
            seed=SEED,
            config=config,
            contract=cast(ContractName, contract),
            curator="model" if get_configuration(config).curator else "none",
            model="scripted-demo",
            options={"scripted": True},
        )
        with ScriptedServer(responder=responder_cls()) as srv:
            client = ModelClient(
                base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
            )
            led = Ledger.create(out / name, meta)
            try:
                res = await run_ledger(led, client, sessions=5)
            finally:
                led.close()
                await client.aclose()
        assert not res.failed, res.failed
        paths[(episode, contract)] = out / name

    async def all_runs() -> None:
        await asyncio.gather(*(one(e, c) for e, c in RUNS))

    asyncio.run(all_runs())
    return paths


def _shape(path: Path) -> list[tuple[Any, ...]]:
    """The journal without timestamps, hashes and scripted free text."""
    rows = []
    for line in (path / "journal.jsonl").read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        d = e["data"]
        key: tuple[Any, ...] = (e["seq"], e["session"], e["kind"], e["node"], e["actor"])
        if e["kind"] in ("dependency_checked",):
            key += (d["requirement"], d["claimed"], d["result"], d["evidence_id"])
        elif e["kind"] in ("closure_blocked", "node_closed"):
            key += (tuple(d["unmet"]),)
        elif e["kind"] == "return_condition_revised":
            key += (tuple(d["carried"]), tuple(d["retired"]), tuple(d["added"]))
        elif e["kind"] == "evidence_added":
            key += (d["id"], d["requirement"], d["status"], d["source_id"])
        elif e["kind"] == "downgrade_proposed":
            key += (d["id"], d["requirement"], d["action"], d["status"])
        rows.append(key)
    return rows


@pytest.mark.parametrize(("episode", "contract"), RUNS)
def test_replay_matches_the_committed_ledger(
    replays: dict[tuple[str, str], Path], episode: str, contract: str
) -> None:
    fresh = replays[(episode, contract)]
    committed = REPO / "ledgers" / _name(episode, contract)
    assert verify(fresh).ok
    assert _shape(fresh) == _shape(committed)
    with Ledger.open(fresh) as a, Ledger.open(committed) as b:
        fa, fb = audit(a).findings, audit(b).findings
        assert [f.model_dump(exclude={"detail"}) for f in fa] == [
            f.model_dump(exclude={"detail"}) for f in fb
        ]
        assert a.meta.contract == b.meta.contract == contract


def test_grabe_under_pilot01_retires_the_requirement_on_the_models_prose(
    replays: dict[tuple[str, str], Path],
) -> None:
    with Ledger.open(replays[("grabe", "pilot-01")]) as led:
        q1 = led.raw_nodes()["q1"]
        [chk] = [c for c in q1["checks"] if c["session"] == 2 and c["requirement"] == "r1"]
        assert chk["evidence_text"] == GRABE_EVIDENCE and chk["result"] == "satisfied"
        assert PAMPHLETS not in [r["text"] for r in q1["return_condition"]["required_facts"]]
        # pilot-01 ran the checks inside the deliverable: no checker call was made
        assert all(c.kind != "checker" for r in led.session_records() for c in r.calls)
        assert q1["evidence"] == []


def test_grabe_under_pilot02_keeps_the_requirement_waiting(
    replays: dict[tuple[str, str], Path],
) -> None:
    with Ledger.open(replays[("grabe", "pilot-02")]) as led:
        q1 = led.raw_nodes()["q1"]
        r1 = next(r for r in q1["return_condition"]["required_facts"] if r["id"] == "r1")
        assert r1["text"] == PAMPHLETS and r1["status"] != "satisfied"
        [ev] = [e for e in q1["evidence"] if e["passage"] == GRABE_EVIDENCE]
        assert ev["status"] == "proposed" and ev["session"] == 2
        # later sessions are still asked about it, and see it rendered as not established
        for s in (3, 4, 5):
            rec = led.session_record(s)
            assert rec is not None and PAMPHLETS in rec.rendering
            assert "checker-r1" in rec.inputs


def test_suppression_under_both_contracts(replays: dict[tuple[str, str], Path]) -> None:
    with Ledger.open(replays[("suppression", "pilot-01")]) as led:
        rec = led.session_record(3)
        assert rec is not None and rec.decision == "ANSWER" and rec.delta == pytest.approx(-1 / 15)
        q1 = led.raw_nodes()["q1"]
        assert q1["status"] == "closed"
        assert q1["return_condition"]["required_facts"][0]["text"] == SUPPRESSION
        assert q1["return_condition"]["required_facts"][0]["status"] == "not_satisfied"
        assert q1["downgrades"] == []  # pilot-01 had no downgrade route
    with Ledger.open(replays[("suppression", "pilot-02")]) as led:
        rec = led.session_record(3)
        assert rec is not None and rec.decision == "ANSWER" and rec.delta == pytest.approx(-1 / 15)
        assert json.loads(rec.model_dump_json())["closure"] == {"closed": False, "unmet": ["r1"]}
        q1 = led.raw_nodes()["q1"]
        assert q1["status"] == "open"
        kept = [p for p in q1["preserved"] if p["reason"] == "closure_blocked"]
        assert len(kept) == 1 and "q1 is closed" in kept[0]["text"] and kept[0]["session"] == 3
        [d] = q1["downgrades"]
        assert (d["proposed_by"], d["action"], d["status"]) == ("model", "waive", "pending")
        # q1 stays in the queue and is worked again
        assert led.session_record(4).focus == "q1"  # type: ignore[union-attr]
