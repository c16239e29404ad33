"""The seeded scripted model: runs of one configuration differ, a run replayed is the same, the
replies carry no "scripted" label (the metadata does), and requirements the example source
states are verified from it while the others stay unchecked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.rundata import load_runs
from curiosity_tui.cli import main
from curiosity_tui.contract.sources import add_source
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.research import ResearchResponder, load_bank, stream
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import run_ledger

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ["A", "B", "B-armed+cur", "C+cur", "B-armed-cur", "C-cur"]
PLAN = f"""\
name = "offline-variance"
configurations = {json.dumps(CONFIGS)}
runs = 3
sessions = 3
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "live_nodes"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
metrics = ["max_depth", "nodes_worked"]
"""
#: metrics every configuration defines (the no-store arms A and B have tokens, not nodes)
TOKENS = "tokens_final_per_session"
STORE = ("live_nodes", "nodes_worked", "facts_total", "voluntary_progression")


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("offline-pilot")
    plan = root / "plan.toml"
    plan.write_text(PLAN)
    out = root / "runs"
    argv = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--unregistered"]
    assert main([*argv, "--concurrency", "6"]) == 0
    return out


def test_offline_pilot_runs_of_one_configuration_differ(pilot: Path) -> None:
    runs = load_runs([pilot])
    assert len(runs) == 18
    reg = default_registry()
    by_config: dict[str, list] = {}
    for r in runs:
        by_config.setdefault(r.config, []).append(r)
    assert sorted(by_config) == sorted(CONFIGS)
    for config, rs in by_config.items():
        assert len(rs) == 3 and all(len(r.committed_sessions()) == 3 for r in rs)
        names = [TOKENS] if config in ("A", "B") else [TOKENS, *STORE]
        differing = [n for n in names if len({reg.get(n)(r) for r in rs}) > 1]
        assert TOKENS in differing, f"{config}: {TOKENS} is the same in every run"
        if config not in ("A", "B"):
            assert len(differing) >= 3, f"{config}: only {differing} differ between runs"
    deltas = {r.run_id: r.deltas() for r in runs if r.config.startswith("C")}
    assert len({tuple(d) for d in deltas.values()}) == len(deltas)  # Δ differs run to run


def test_offline_pilot_records_scripted_in_metadata_not_in_text(pilot: Path) -> None:
    with Ledger.open(pilot / "C+cur-r0") as led:
        assert led.meta.options["scripted"] is True
        assert led.meta.options["planned_sessions"] == 3
        texts = [n["text"] for n in led.raw_nodes().values()]
        outputs = [r.output_text for r in led.session_records()]
    assert len(texts) > 1
    for t in texts + outputs:
        assert "scripted" not in t.lower()


def _run_once(path: Path, name: str, sources: tuple[Path, ...] = ()) -> Ledger:
    async def go() -> None:
        with ScriptedServer(responder=ResearchResponder()) as srv:
            client = ModelClient(base_url=srv.base_url, api_key="k", model="scripted-demo")
            led = Ledger.create(
                path, RunMeta(name=name, seed=load_bank().seed, config="C-cur", contract="pilot-02")
            )
            try:
                for src in sources:
                    add_source(led, src, title="note", locator=src.name, actor="system")
                result = await run_ledger(led, client, sessions=3)
            finally:
                led.close()
            await client.aclose()
        assert not result.failed

    asyncio.run(go())
    return Ledger.open(path)


def test_a_run_replayed_draws_the_same_replies(tmp_path: Path) -> None:
    with _run_once(tmp_path / "a", "same-name") as a, _run_once(tmp_path / "b", "same-name") as b:
        assert a.raw_nodes() == b.raw_nodes()
        assert [r.delta for r in a.session_records()] == [r.delta for r in b.session_records()]
    with _run_once(tmp_path / "c", "other-name") as c, Ledger.open(tmp_path / "a") as a:
        assert c.raw_nodes() != a.raw_nodes()


def test_the_seed_is_run_session_and_kind() -> None:
    draws = {
        (run, s, kind): stream(run, s, kind).random()
        for run in ("C+cur-r0", "C+cur-r1")
        for s in (1, 2)
        for kind in ("deliverable", "judge-after")
    }
    assert len(set(draws.values())) == len(draws)
    assert stream("C+cur-r0", 1, "deliverable").random() == draws[("C+cur-r0", 1, "deliverable")]


def test_supported_requirements_are_verified_from_the_example_source() -> None:
    bank = load_bank()
    source = (ROOT / "scripts" / "example_source.txt").read_text(encoding="utf-8")
    reqs = [r for t in bank.topics for r in t.requirements]
    supported = [r for r in reqs if r.supported]
    assert supported and len(supported) < len(reqs)  # some supported, some not
    for r in supported:
        assert r.evidence and r.evidence in source, r.text
    responder = ResearchResponder()
    req = supported[0]
    passage = next(p for p in source.split("\n\n") if req.evidence and req.evidence in p)
    prompt = f"Required fact r1: {req.text}\n\n[source {'a' * 64}]\n{' '.join(passage.split())}\n"
    body = {"messages": [{"role": "user", "content": prompt}]}
    reply = responder("checker", 2, body, run="x")
    assert reply["satisfied"] is True and reply["passage"] == req.evidence
    unsupported = next(r for r in reqs if not r.supported)
    prompt = f"Required fact r1: {unsupported.text}\n\n[source {'a' * 64}]\n{passage}\n"
    reply = responder("checker", 2, {"messages": [{"role": "user", "content": prompt}]}, run="x")
    assert reply["satisfied"] is False and reply["passage"] is None


def test_scripted_label_in_the_pack_manifest_and_the_app_header(tmp_path: Path) -> None:
    from curiosity_tui.packs.build import build_pack, material_from_ledger
    from curiosity_tui.packs.schemes import load_scheme
    from curiosity_tui.protocol.configs import CONFIG_NAMES
    from curiosity_tui.runs.runner import plan_runs, run_pilot

    out = tmp_path / "runs"
    specs = plan_runs(
        seed=load_bank().seed,
        configurations=list(CONFIG_NAMES),
        runs=1,
        options={"scripted": True},
    )

    async def go() -> None:
        with ScriptedServer(responder=ResearchResponder()) as srv:
            client = ModelClient(base_url=srv.base_url, api_key="k", model="scripted-demo")
            results = await run_pilot(specs, out, client, sessions=5, concurrency=6)
            await client.aclose()
        assert not any(r.failed for r in results)

    asyncio.run(go())
    materials = [material_from_ledger(out / s.name) for s in specs]
    res = build_pack(materials, load_scheme("pilot-01"), tmp_path / "pack", seed=3)
    manifest = json.loads((tmp_path / "pack" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["scripted"] is True and res.manifest.scripted
    items = (tmp_path / "pack" / "items.jsonl").read_text(encoding="utf-8")
    assert "scripted" not in items.lower()
    unscripted = [material_from_ledger(out / s.name) for s in specs]
    for m in unscripted:
        m.scripted = False
    plain = build_pack(unscripted, load_scheme("pilot-01"), tmp_path / "plain", seed=3)
    assert plain.manifest.scripted is False

    from curiosity_tui.app import make_app
    from curiosity_tui.screens.browser import BrowserScreen

    async def header() -> str:
        app = make_app(out, ledger=out / "C+cur-r0")
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(app.screen, BrowserScreen)
            return str(app.screen.sub_title)

    assert asyncio.run(header()).endswith("· scripted replies, no model")
