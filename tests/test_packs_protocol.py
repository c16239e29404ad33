"""Packs from real protocol runs: six configurations run five sessions each against the
scripted server (offline), then a pack is built from the ledgers and checked for blinding."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from curiosity_tui.packs.build import build_pack, collect_ledgers, material_from_ledger
from curiosity_tui.packs.leakcheck import leakcheck
from curiosity_tui.packs.pack import Pack
from curiosity_tui.packs.schemes import load_scheme

LABELS = [
    "B-armed",
    "C+cur",
    "C-cur",
    "curator",
    "status:",
    "pulse",
    "[checked",
    "[unchecked]",
    "[waived]",
    "return condition",
    "closure test",
    "preserved",
    "QUESTION LEDGER",
    "queue",
    "<PRESERVE>",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from curiosity_tui.modelio.client import ModelClient
    from curiosity_tui.offline.demo import DemoResponder
    from curiosity_tui.offline.scripted_server import ScriptedServer
    from curiosity_tui.protocol.configs import CONFIG_NAMES
    from curiosity_tui.runs.runner import plan_runs, run_pilot

    out = tmp_path_factory.mktemp("runs")
    srv = ScriptedServer(responder=DemoResponder()).start()
    client = ModelClient(
        base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
    )
    specs = plan_runs(
        seed="Did the printing press cause the Reformation?",
        configurations=list(CONFIG_NAMES),
        runs=1,
        contract="pilot-02",
    )

    async def go():  # type: ignore[no-untyped-def]
        try:
            return await run_pilot(specs, out, client, sessions=5, concurrency=6)
        finally:
            await client.aclose()

    try:
        results = asyncio.run(go())
    finally:
        srv.stop()
    assert all(not r.failed for r in results)
    return out


@pytest.mark.parametrize("scheme", ["pilot-01", "pilot-02"])
def test_pack_from_protocol_runs_is_blind(run_dir: Path, tmp_path: Path, scheme: str) -> None:
    mats = [material_from_ledger(p) for p in collect_ledgers([run_dir])]
    assert sorted(m.config for m in mats) == sorted(
        ["A", "B", "B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
    )
    # the saved renderings the sessions received did carry labels …
    c_mat = next(m for m in mats if m.config == "C+cur")
    from curiosity_tui.ledger import Ledger

    with Ledger.open(c_mat.ledger) as led:
        assert "status:" in led.rendering(5)
    res = build_pack(mats, load_scheme(scheme), tmp_path / "pack", seed=3)
    pack = Pack.open(res.packdir)
    text = "\n".join(s for it in pack.items.values() for s in it.sections)
    # … the pack does not
    for label in LABELS:
        assert label.lower() not in text.lower(), label
    assert not re.search(r"(?m)^\s*[?=] ", text)
    key = json.loads(res.key_path.read_text())["items"]
    for item_id, it in pack.items.items():
        entry = key[item_id]
        if entry["kind"] == "run":
            assert (it.sections[1] == "") == (entry["config"] in ("A", "B"))
    assert res.n_controls == (3 if scheme == "pilot-02" else 0)
    rep = leakcheck(res.packdir, permutations=20)
    assert rep.tasks[0].task == "families"
