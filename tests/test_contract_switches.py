"""Contracts as switches (issue 16, item 1): naming and storage, every combination run end to
end (scripted) with its audit and metrics, and one test per switch that fails when the
switch's rule is disabled (the mutation check: each rule is governed by its switch alone).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.analysis.registry import get
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.cli import main as cli_main
from curiosity_tui.contract import downgrades, rules
from curiosity_tui.contract.audit import audit
from curiosity_tui.contract.rules import PILOT_01, PILOT_02, get_contract
from curiosity_tui.contract_switches import (
    ContractSwitches,
    all_combinations,
    canonical_name,
    contract_slug,
    switches_of,
)
from curiosity_tui.errors import InputError
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import plan_runs, run_ledger

SEED = "Did the printing press cause the Reformation?"
EXAMPLES = Path(__file__).resolve().parent.parent / "ledgers"

# ----------------------------------------------------------------------------- naming


def test_presets_keep_their_switches_and_names() -> None:
    assert switches_of("pilot-01") == ContractSwitches(evidence="asserted", closure="unconditional")
    assert switches_of("pilot-02") == ContractSwitches(
        evidence="verified", closure="binding+downgrade"
    )
    # pilot-02's switches, written out, are pilot-02 in every respect: stored by its name
    assert canonical_name(" closure = binding+downgrade , evidence=verified ") == "pilot-02"
    assert get_contract("evidence=verified,closure=binding+downgrade") is PILOT_02
    # pilot-01's switches written out are not pilot-01: they check with retrieval (decision 230)
    a_u = get_contract("closure=unconditional,evidence=asserted")
    assert a_u.name == "evidence=asserted,closure=unconditional"
    assert a_u.switches == PILOT_01.switches and a_u is not PILOT_01
    assert (PILOT_01.checks_in_deliverable, a_u.checks_in_deliverable) == (True, False)


def test_every_combination_is_selectable_and_distinct() -> None:
    names = all_combinations()
    # 3 evidence rules (asserted, verified, supported: decision 520) x 3 closure rules, + pilot-01
    assert len(names) == 10 and names[:2] == ["pilot-01", "pilot-02"]
    seen = {(get_contract(n).switches, get_contract(n).checks_in_deliverable) for n in names}
    assert len(seen) == 10
    assert contract_slug("evidence=verified,closure=binding") == "verified-binding"
    for n in names:
        assert canonical_name(n) == n  # stored names are fixed points


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("pilot-03", "unknown contract 'pilot-03'"),
        ("evidence=verified", "switch 'closure' is missing"),
        ("evidence=maybe,closure=binding", "evidence='maybe' is not one of asserted, verified"),
        ("evidence=verified,closure=binding,closure=binding", "given twice"),
        ("evidence=verified,speed=fast", "unknown switch 'speed'"),
        ("evidence,closure=binding", "is not key=value"),
    ],
)
def test_bad_contract_names_say_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(InputError, match=why.replace("(", r"\(").replace(")", r"\)")):
        get_contract(text)
    with pytest.raises(ValueError, match="contract"):
        RunMeta(name="x", seed=SEED, contract=text)


def test_cli_refuses_a_bad_contract_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["ledger", "new", "/nonexistent/x", "--seed", SEED, "--contract", "closure=x"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "closure='x' is not one of unconditional, binding, binding+downgrade" in err
    assert "Traceback" not in err


def test_cli_ledger_new_stores_the_canonical_name(tmp_path: Path) -> None:
    path = tmp_path / "l"
    code = cli_main(
        [
            "ledger",
            "new",
            str(path),
            "--seed",
            SEED,
            "--contract",
            "closure=binding,evidence=verified",
        ]
    )
    assert code == 0
    with Ledger.open(path) as led:
        assert led.meta.contract == "evidence=verified,closure=binding"


def test_old_ledgers_open_verify_and_keep_their_bytes() -> None:
    for name in ("episode-grabe-pilot01", "episode-grabe-pilot02"):
        journal = (EXAMPLES / name / "journal.jsonl").read_bytes()
        with Ledger.open(EXAMPLES / name) as led:
            assert led.meta.contract in ("pilot-01", "pilot-02")
        assert verify(EXAMPLES / name).ok
        assert (EXAMPLES / name / "journal.jsonl").read_bytes() == journal


def test_plan_runs_cross_configurations_with_contracts() -> None:
    specs = plan_runs(
        seed=SEED,
        configurations=["C-cur"],
        runs=2,
        contracts=["pilot-02", "evidence=asserted,closure=binding+downgrade"],
    )
    assert [s.name for s in specs] == [
        "C-cur-pilot-02-r0",
        "C-cur-pilot-02-r1",
        "C-cur-asserted-binding+downgrade-r0",
        "C-cur-asserted-binding+downgrade-r1",
    ]
    assert [s.meta.contract for s in specs][1:3] == [
        "pilot-02",
        "evidence=asserted,closure=binding+downgrade",
    ]
    # one contract: the run names are as before
    assert [s.name for s in plan_runs(seed=SEED, configurations=["C-cur"], runs=1)] == ["C-cur-r0"]


# ----------------------------------------------------------------------------- scripted runs


class _Asserting(DemoResponder):
    """The checker claims every requirement satisfied on its own statement (no passage); the
    deliverable of an ANSWER session proposes to waive r1; under pilot-01 the deliverable
    certifies r1 itself."""

    def _checker(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = super()._checker(s, text, body)
        reply.update(satisfied=True, evidence="I can state it concretely.")
        return reply

    def _deliverable(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = super()._deliverable(s, text, body)
        for c in reply["checks"]:
            c.update(satisfied=True, evidence="I can state it concretely.")
        if "Decision: ANSWER" in text:
            reply["downgrade_proposals"] = [
                {
                    "node": "q1",
                    "fact_id": "r1",
                    "proposal": "waive",
                    "new_text": None,
                    "grounds": "The count cannot be had from any source on file.",
                }
            ]
        return reply


def _drive(path: Path, srv: ScriptedServer, sessions: int) -> None:
    async def go() -> None:
        client = ModelClient(
            base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
        )
        led = Ledger.open(path, write=True)
        try:
            res = await run_ledger(led, client, sessions=sessions)
        finally:
            led.close()
            await client.aclose()
        assert not res.failed, res.failed

    asyncio.run(go())


#: contract -> (r1 after session 2, q1 after session 2, findings of the audit, downgrades)
EXPECTED: dict[str, tuple[str, str, set[str], int]] = {
    "pilot-01": (
        "satisfied",
        "closed",
        {"unverified_satisfied", "closed_without_verified_evidence"},
        0,
    ),
    "pilot-02": ("unchecked", "open", set(), 1),
    "evidence=asserted,closure=unconditional": (
        "satisfied",
        "closed",
        {"unverified_satisfied", "closed_without_verified_evidence"},
        0,
    ),
    "evidence=asserted,closure=binding": (
        "satisfied",
        "closed",
        {"unverified_satisfied", "closed_without_verified_evidence"},
        0,
    ),
    "evidence=asserted,closure=binding+downgrade": (
        "satisfied",
        "closed",
        {"unverified_satisfied", "closed_without_verified_evidence"},
        0,  # r1 was satisfied before the proposal was read: refused as already satisfied
    ),
    "evidence=verified,closure=unconditional": (
        "unchecked",
        "closed",
        {"closed_over_unmet", "closed_without_verified_evidence"},
        0,
    ),
    "evidence=verified,closure=binding": ("unchecked", "open", set(), 0),
    # supported: as verified here (no verified passage is cited, so nothing to judge)
    "evidence=supported,closure=unconditional": (
        "unchecked",
        "closed",
        {"closed_over_unmet", "closed_without_verified_evidence"},
        0,
    ),
    "evidence=supported,closure=binding": ("unchecked", "open", set(), 0),
    "evidence=supported,closure=binding+downgrade": ("unchecked", "open", set(), 1),
}


@pytest.fixture(scope="module")
def scripted_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two scripted sessions under every contract: session 1 PRESERVEs q1 with r1; session 2
    checks r1 and ANSWERs."""
    out = tmp_path_factory.mktemp("contracts")
    paths: dict[str, Path] = {}
    with ScriptedServer(responder=_Asserting(preserve_sessions=(1,))) as srv:
        for name in all_combinations():
            path = out / contract_slug(name)
            meta = RunMeta(name=path.name, seed=SEED, config="C-cur", contract=name)
            Ledger.create(path, meta).close()
            _drive(path, srv, 2)
            paths[name] = path
    return paths


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_combination_runs_and_its_audit_and_metrics_work(
    scripted_runs: dict[str, Path], name: str
) -> None:
    r1_status, q1_status, kinds, n_downgrades = EXPECTED[name]
    path = scripted_runs[name]
    assert verify(path).ok
    with Ledger.open(path) as led:
        assert led.meta.contract == name
        q1 = led.raw_nodes()["q1"]
        assert q1["return_condition"]["required_facts"][0]["status"] == r1_status
        assert q1["status"] == q1_status
        assert len(q1["downgrades"]) == n_downgrades
        rec = led.session_record(2)
        assert rec is not None and rec.contract == name and rec.decision == "ANSWER"
        report = audit(led)
        run = RunData.from_ledger(led)
    assert report.contract == name
    assert {f.kind for f in report.findings} == kinds
    assert report.breaches() == []  # the transitions never break their own contract
    closed = q1_status == "closed"
    over_unmet = r1_status != "satisfied" and closed
    assert get("closed_over_unmet")(run) == float(over_unmet)
    assert get("closures_blocked")(run) == float(not closed)
    assert get("downgrades_proposed")(run) == float(n_downgrades)
    asserted = get("satisfied_asserted_per_session")(run)
    assert asserted == (0.5 if r1_status == "satisfied" else 0.0)  # one mark over 2 sessions
    assert get("satisfied_verified_per_session")(run) == 0.0


def test_switch_combinations_check_with_retrieval(scripted_runs: dict[str, Path]) -> None:
    """Every contract but pilot-01 (as run) asks a checker call with retrieved passages; the
    checker instruction follows the evidence switch."""
    for name, path in scripted_runs.items():
        with Ledger.open(path) as led:
            rec = led.session_record(2)
        assert rec is not None
        if name == "pilot-01":
            assert "checker-r1" not in rec.inputs
            continue
        prompt = rec.inputs["checker-r1"]
        assert "Source passages retrieved for this requirement" in prompt
        assert get_contract(name).checker_instruction in prompt
        own_knowledge = "knowledge you can state concretely" in prompt
        assert own_knowledge == (switches_of(name).evidence == "asserted")


def test_an_approved_downgrade_allows_the_closure_and_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "run"
    meta = RunMeta(name="run", seed=SEED, config="C-cur", contract="pilot-02")
    Ledger.create(path, meta).close()
    with ScriptedServer(responder=_Asserting(preserve_sessions=(1,))) as srv:
        _drive(path, srv, 2)
        with Ledger.open(path, write=True) as led:
            [pending] = downgrades.list_downgrades(led, pending_only=True)
            downgrades.decide(
                led,
                pending.id,
                "approve",
                grounds="Agreed: the count is not needed to answer.",
                actor="human:ana",
            )
        _drive(path, srv, 3)
    with Ledger.open(path) as led:
        assert led.raw_nodes()["q1"]["status"] == "closed"
        run = RunData.from_ledger(led)
    assert [(c.session, c.closed, c.unmet, c.downgraded) for c in run.closures or []] == [
        (2, False, ["r1"], []),
        (3, True, [], ["r1"]),
    ]
    assert get("closures_allowed_by_downgrade")(run) == 1.0
    assert get("closures_blocked")(run) == 1.0
    assert get("closed_over_unmet")(run) == 0.0
    assert (get("downgrades_approved")(run), get("downgrades_rejected")(run)) == (1.0, 0.0)


# ----------------------------------------------------------------------------- mutation checks


def _disable(monkeypatch: pytest.MonkeyPatch, prop: str) -> None:
    """Disable one switch's rule: the property that reads it always answers False."""
    monkeypatch.setattr(rules.Contract, prop, property(lambda self: False))


def _check_then_answer(path: Path, contract: str) -> dict[str, Any]:
    meta = RunMeta(name=path.name, seed=SEED, config="C-cur", contract=contract)
    Ledger.create(path, meta).close()
    with ScriptedServer(responder=_Asserting(preserve_sessions=(1,))) as srv:
        _drive(path, srv, 2)
    with Ledger.open(path) as led:
        q1 = led.raw_nodes()["q1"]
        return {
            "r1": q1["return_condition"]["required_facts"][0]["status"],
            "q1": q1["status"],
            "downgrades": len(q1["downgrades"]),
            "kinds": [e.kind for e in led.events() if e.session == 2],
        }


@pytest.mark.parametrize("mutate", [False, True])
def test_evidence_switch_governs_the_satisfied_transition_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutate: bool
) -> None:
    """evidence=verified under a non-binding closure: with the rule, the unverified claim
    leaves r1 unchecked; disabled, the claim marks it satisfied. The closure outcome (closed,
    unconditional) is the same either way: the evidence switch does not touch closure."""
    if mutate:
        _disable(monkeypatch, "evidence_required")
    out = _check_then_answer(tmp_path / "r", "evidence=verified,closure=unconditional")
    assert out["q1"] == "closed"
    assert "closure_blocked" not in out["kinds"]
    assert out["r1"] == ("satisfied" if mutate else "unchecked")


@pytest.mark.parametrize("mutate", [False, True])
def test_closure_switch_governs_closure_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutate: bool
) -> None:
    """closure=binding under evidence=verified: with the rule, the ANSWER over unmet r1 is
    blocked; disabled, q1 closes over it. r1's status is the same either way."""
    if mutate:
        _disable(monkeypatch, "closure_bound")
    out = _check_then_answer(tmp_path / "r", "evidence=verified,closure=binding")
    assert out["r1"] == "unchecked"
    assert out["q1"] == ("closed" if mutate else "open")
    assert ("closure_blocked" in out["kinds"]) is not mutate
    assert out["downgrades"] == 0


@pytest.mark.parametrize("mutate", [False, True])
def test_downgrade_route_is_governed_by_binding_plus_downgrade_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutate: bool
) -> None:
    """closure=binding+downgrade: with the route, the model's waive proposal is recorded;
    disabled, it is not. The block itself does not depend on the route."""
    if mutate:
        _disable(monkeypatch, "downgrades_allowed")
    out = _check_then_answer(tmp_path / "r", "pilot-02")
    assert (out["r1"], out["q1"]) == ("unchecked", "open")
    assert "closure_blocked" in out["kinds"]
    assert out["downgrades"] == (0 if mutate else 1)


def test_audit_marks_what_the_contract_forbids_as_a_breach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The events of an asserted-evidence, unconditional run, audited as if its contract were
    pilot-02: the same finding kinds, now breaches (pilot-02's transitions cannot write them)."""
    from curiosity_tui.contract import audit as audit_mod

    path = tmp_path / "src"
    contract = "evidence=asserted,closure=unconditional"
    Ledger.create(path, RunMeta(name="src", seed=SEED, config="C-cur", contract=contract)).close()
    with ScriptedServer(responder=_Asserting(preserve_sessions=(1,))) as srv:
        _drive(path, srv, 2)
    with Ledger.open(path) as led:
        permitted = audit(led)
        real = audit_mod.switches_of
        monkeypatch.setattr(audit_mod, "switches_of", lambda _name: real("pilot-02"))
        forbidden = audit(led)
    assert permitted.breaches() == [] and permitted.findings
    assert all("breach" not in f.model_dump() for f in permitted.findings)
    kinds = {f.kind: f for f in forbidden.findings}
    assert [f.kind for f in forbidden.findings] == [f.kind for f in permitted.findings]
    assert kinds["unverified_satisfied"].breach
    assert "(evidence=verified) forbids this" in kinds["unverified_satisfied"].detail
    assert not kinds["closed_without_verified_evidence"].breach
    assert json.loads(json.dumps(kinds["unverified_satisfied"].model_dump()))["breach"] is True


def test_audit_closure_over_unmet_is_a_breach_only_under_binding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curiosity_tui.contract import audit as audit_mod

    path = tmp_path / "src"
    contract = "evidence=verified,closure=unconditional"
    Ledger.create(path, RunMeta(name="src", seed=SEED, config="C-cur", contract=contract)).close()
    with ScriptedServer(responder=_Asserting(preserve_sessions=(1,))) as srv:
        _drive(path, srv, 2)
    real = audit_mod.switches_of
    with Ledger.open(path) as led:
        [permitted] = [f for f in audit(led).findings if f.kind == "closed_over_unmet"]
        monkeypatch.setattr(
            audit_mod, "switches_of", lambda _n: real("evidence=verified,closure=binding")
        )
        [forbidden] = [f for f in audit(led).findings if f.kind == "closed_over_unmet"]
    assert (permitted.breach, forbidden.breach) == (False, True)
    assert "(closure=binding) forbids this" in forbidden.detail


def test_asserted_evidence_keeps_cited_passages_apart_from_verified_ones(tmp_path: Path) -> None:
    """evidence=asserted (not pilot-01): a cited passage is stored and match-checked; the mark
    is satisfied either way, and the metrics tell a verified mark from an asserted one."""
    from tests.test_evidence import VERBATIM, _check, _ledger

    contract = get_contract("evidence=asserted,closure=binding")
    led, sid = _ledger(tmp_path, contract.name)
    with led:
        good = _check(led, contract, source_id=sid, passage=VERBATIM)
        bad = _check(led, contract, source_id=sid, passage="a passage the source never had")
        prose = _check(led, contract)  # no citation: no evidence record, as under pilot-01
        evidence = led.raw_nodes()["q1"]["evidence"]
        run = RunData.from_ledger(led)
    assert [o.result for o in (good, bad, prose)] == ["satisfied"] * 3
    assert (good.verified, bad.verified, prose.evidence_id) == (True, False, None)
    assert [e["status"] for e in evidence] == ["verified", "proposed"]
    marks = [c["evidence_id"] for c in run.nodes["q1"].checks]
    assert marks == ["e1", "e2", None]
    # no committed session record: per-session marks are undefined, the split is in _marks
    from curiosity_tui.analysis.contract_metrics import _marks

    assert _marks(run) == (1, 2)


def test_packs_stay_blind_to_the_contract(tmp_path: Path) -> None:
    """Runs named after their contract (as a multi-contract plan names them): no item, and
    nothing in the pack a rater opens, names the contract; only the key knows the run."""
    from curiosity_tui.packs.build import build_pack, material_from_ledger
    from curiosity_tui.packs.schemes import load_scheme

    contracts = ["pilot-02", "evidence=asserted,closure=binding"]
    specs = plan_runs(seed=SEED, configurations=["C-cur"], runs=1, contracts=contracts)
    with ScriptedServer(responder=_Asserting(preserve_sessions=(1, 3))) as srv:
        for spec in specs:
            Ledger.create(tmp_path / spec.name, spec.meta).close()
            _drive(tmp_path / spec.name, srv, 5)
    mats = [material_from_ledger(tmp_path / s.name) for s in specs]
    res = build_pack(mats, load_scheme("pilot-01"), tmp_path / "pack", seed=3)
    from curiosity_tui.packs.pack import Pack

    pack = Pack.open(res.packdir)
    assert len(pack.items) == 2
    items = json.dumps([it.model_dump() for it in pack.items.values()])
    for word in ("pilot-0", "evidence=", "closure=", "asserted-binding", "verified", "binding"):
        assert word not in items, word
    manifest_items = json.dumps([ref.model_dump() for ref in pack.manifest.items])
    assert "C-cur" not in manifest_items and "binding" not in manifest_items
    key = res.key_path.read_text(encoding="utf-8")
    assert "C-cur-asserted-binding-r0" in key  # the key (kept apart) still maps items to runs
