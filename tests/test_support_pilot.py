"""Acceptance of issue 26.3 (decision 520): scripted runs under ``evidence = supported`` where
a verified but non-supporting passage leaves its requirement unsatisfied — judged by a person
with keys between sessions (one key at a time, and as one burst), and by the model judge the
plan names — and the audit names it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from curiosity_tui.app.navigator import Navigation
from curiosity_tui.cli import main as cli_main
from curiosity_tui.contract.audit import audit
from curiosity_tui.contract.sources import add_source
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import run_ledger
from curiosity_tui.screens.curator import CuratorScreen
from curiosity_tui.screens.support import SupportScreen
from curiosity_tui.screens.support_form import SupportJudgeScreen
from tests.keyburst import burst, keys_of
from tests.test_evidence import SOURCE

SEED = "Did the printing press cause the Reformation?"
SUPPORTED = "evidence=supported,closure=binding+downgrade"
#: shares the words of session 1's scripted requirement ("a count of literacy rates among
#: urban artisans"): the scripted judge says yes to it
ON_TOPIC = "A count of literacy rates among urban artisans survives for Nuremberg, 1520.\n"
GROUNDS = "The passage counts pamphlets by city and says nothing of artisans' literacy."
SIZE = (150, 45)


class Host(Navigation):
    def __init__(self, first: Any) -> None:
        super().__init__()
        self.first = first

    def on_mount(self) -> None:
        self.push_screen(self.first)


def _ledger(tmp_path: Path, source: str = SOURCE, **options: Any) -> Path:
    path = tmp_path / "run"
    meta = RunMeta(name="run", seed=SEED, config="C-cur", contract=SUPPORTED, options=options)
    with Ledger.create(path, meta) as led:
        src = tmp_path / "printing.txt"
        src.write_text(source, encoding="utf-8")
        add_source(led, src, title="Printing in the Empire")
    return path


def _run(path: Path, srv: ScriptedServer, sessions: int) -> None:
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


def _q1(path: Path) -> dict[str, Any]:
    with Ledger.open(path) as led:
        return led.raw_nodes()["q1"]


def _kinds(path: Path, kind: str) -> list[Any]:
    with Ledger.open(path) as led:
        return [e for e in led.events() if e.kind == kind]


def _not_supporting(path: Path) -> list[Any]:
    with Ledger.open(path) as led:
        return [f for f in audit(led).findings if f.kind == "verified_not_supporting"]


def test_the_named_model_judge_keeps_a_non_supporting_passage_from_satisfying(
    tmp_path: Path,
) -> None:
    path = _ledger(tmp_path, support_judge="model:scripted")
    with ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as srv:
        _run(path, srv, 3)
        assert len(srv.requests_of("support-judge")) == 1
    q1 = _q1(path)
    r1 = q1["return_condition"]["required_facts"][0]
    [e1] = [e for e in q1["evidence"] if e["id"] == "e1"]
    assert e1["status"] == "verified"  # the match check passed: the passage is in the source
    [j] = e1["support"]
    assert (j["by"], j["verdict"], j["admitted"]) == ("model:scripted", "no", True)
    assert r1["status"] == "unchecked" and q1["status"] != "closed"
    assert _kinds(path, "closure_blocked")  # session 2's ANSWER on q1 did not close it
    [finding] = _not_supporting(path)
    assert (finding.node, finding.requirement) == ("q1", "r1")
    assert "model:scripted judged" in finding.detail and "does not establish r1" in finding.detail
    with Ledger.open(path) as led:
        calls = [c.kind for c in led.session_records()[2].calls]
    assert "support-judge" in calls  # the judge's call is on the next session's record
    assert verify(path).ok


def test_a_supporting_passage_judged_yes_satisfies(tmp_path: Path) -> None:
    path = _ledger(tmp_path, source=ON_TOPIC, support_judge="model:scripted")
    with ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as srv:
        _run(path, srv, 3)
    q1 = _q1(path)
    assert [j["verdict"] for j in q1["evidence"][0]["support"]] == ["yes"]
    assert q1["return_condition"]["required_facts"][0]["status"] == "satisfied"
    assert not _not_supporting(path)


def test_a_model_judge_the_plan_does_not_name_is_never_called(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    with ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as srv:
        _run(path, srv, 3)
        assert srv.requests_of("support-judge") == []
    with Ledger.open(path) as led:
        kinds = {f.kind for f in audit(led).findings}
    assert "verified_support_unjudged" in kinds


async def _judge_in_app(path: Path, *, one_burst: bool) -> None:
    led = Ledger.open(path, write=True)
    try:
        app = Host(CuratorScreen(led, 2, "human:ann", lambda: None))
        app.curator_name = "ann"  # type: ignore[attr-defined]
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            if one_burst:
                await burst(pilot, keys_of("E", "y", "n", GROUNDS, "ctrl+s"))
            else:
                await pilot.press("E")
                await app.workers.wait_for_complete()
                await pilot.pause()
                assert isinstance(app.screen, SupportScreen)
                await pilot.press("y")
                await pilot.pause()
                assert isinstance(app.screen, SupportJudgeScreen)
                await pilot.press("n", *keys_of(GROUNDS), "ctrl+s")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(app.screen, SupportScreen)
    finally:
        led.close()


def _human_run(tmp_path: Path, one_burst: bool) -> Path:
    path = _ledger(tmp_path)
    with ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as srv:
        _run(path, srv, 2)
        assert _q1(path)["return_condition"]["required_facts"][0]["status"] == "unchecked"
        asyncio.run(_judge_in_app(path, one_burst=one_burst))
        _run(path, srv, 3)
    return path


def _assert_judged_no_by_ann(path: Path) -> None:
    [ev] = _kinds(path, "support_judged")
    assert ev.actor == "human:ann" and ev.node == "q1"
    assert (ev.data["verdict"], ev.data["grounds"], ev.data["by"]) == ("no", GROUNDS, "human:ann")
    q1 = _q1(path)
    assert q1["return_condition"]["required_facts"][0]["status"] == "unchecked"
    assert q1["status"] != "closed"
    [finding] = _not_supporting(path)
    assert (finding.node, finding.requirement) == ("q1", "r1")
    assert "human:ann judged" in finding.detail


def test_a_person_judges_with_keys_between_sessions(tmp_path: Path) -> None:
    _assert_judged_no_by_ann(_human_run(tmp_path, one_burst=False))


def test_a_person_judges_in_one_burst(tmp_path: Path) -> None:
    _assert_judged_no_by_ann(_human_run(tmp_path, one_burst=True))


def test_the_cli_judges_and_the_audit_cli_names_it(tmp_path: Path, capsys: Any) -> None:
    path = _ledger(tmp_path)
    with ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as srv:
        _run(path, srv, 2)
    argv = ["support", "judge", str(path), "--req", "r1", "--verdict", "no"]
    assert cli_main([*argv, "--grounds", GROUNDS, "--by", "ann"]) == 0
    assert "no by human:ann (admitted); r1 is unchecked" in capsys.readouterr().out
    assert cli_main([*argv, "--grounds", GROUNDS, "--by", "ann"]) == 2  # judged already
    assert "human:ann already judged" in capsys.readouterr().err
    assert cli_main(["audit", str(path)]) == 1
    out = capsys.readouterr().out
    assert "- verified_not_supporting: q1/r1" in out
    asyncio.run(_audit_screen_names_it(path))


async def _audit_screen_names_it(path: Path) -> None:
    from textual.widgets import Static, Tree

    from curiosity_tui.screens.audit import AuditScreen

    app = Host(AuditScreen(path))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.screen.query_one("#audit-status", Static).render())
        assert "(e) verified but not supporting (judged no or partly): 1" in status
        [node] = [n for n in app.screen.query_one(Tree).root.children if "q1/r1" in str(n.label)]
        leaves = " ".join(str(leaf.label) for leaf in node.children)
        assert "(e) verified but not supporting" in leaves and "human:ann judged" in leaves


# ----------------------------------------------------------------------------- support-audit pack


def test_support_audit_pack_builds_is_rated_by_two_and_agreement_runs(
    tmp_path: Path, capsys: Any
) -> None:
    import json

    from curiosity_tui.packs.pack import default_key_path
    from curiosity_tui.packs.rating import RatingSession

    runs = tmp_path / "runs"
    runs.mkdir()
    with ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as srv:
        for name, text in (("off", SOURCE), ("on", ON_TOPIC)):
            (runs / name).mkdir()
            _run(_ledger(runs / name, source=text), srv, 2)
    pack = tmp_path / "pack"
    ledgers = [str(runs / name / "run") for name in ("off", "on")]
    argv = ["pack", "build", *ledgers, "--scheme", "support-audit", "--out", str(pack)]
    assert cli_main([*argv, "--seed", "7", "--raters", "ann,bob"]) == 0
    assert "(requirement, passage) items from 2 run(s)" in capsys.readouterr().out
    items = [json.loads(line) for line in (pack / "items.jsonl").read_text().splitlines()]
    assert len(items) == 2
    blob = (pack / "items.jsonl").read_text() + (pack / "manifest.json").read_text()
    for leak in ("evidence=supported", "human:", "model:", "runs/on", '"e1"', "q1/e1"):
        assert leak not in blob  # blind: no contract, judge, run or evidence id
    assert {i["sections"][2].startswith(("Between 1518", "A count of")) for i in items} == {True}
    key = json.loads(default_key_path(pack).read_text())
    assert sorted(e["evidence"] for e in key["items"].values()) == ["q1/e1", "q1/e1"]
    verdicts = {"ann": ["does-not", "supports"], "bob": ["does-not", "partly"]}
    for rater, picks in verdicts.items():
        copy = tmp_path / f"copy-{rater}"
        assert cli_main(["pack", "export", str(pack), "--rater", rater, "--out", str(copy)]) == 0
        session = RatingSession(copy, rater)
        for item in session.order:
            on_topic = "A count of" in next(i for i in items if i["id"] == item)["sections"][2]
            pick = picks[1] if on_topic else picks[0]
            session.save(item, {"support": {"category": pick, "grounds": f"{rater} read it"}})
        assert (
            cli_main(["ratings", "import", str(pack), str(copy / "ratings" / f"{rater}.jsonl")])
            == 0
        )
    capsys.readouterr()
    assert cli_main(["agreement", str(pack), "--json", "--boot", "200"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["scheme"] == "support-audit"
    [q] = report["questions"]
    assert (q["question"], q["raters"], q["n_items"]) == ("support", ["ann", "bob"], 2)
    assert q["raw_agreement"]["value"] == 0.5  # agreed on the off-topic passage only


def test_the_browser_opens_the_judgements_of_a_run_without_a_curator(tmp_path: Path) -> None:
    """A run without a curator: judged from the ledger browser between two `run` calls."""
    from curiosity_tui.screens.browser import BrowserScreen

    path = _ledger(tmp_path)
    with ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as srv:
        _run(path, srv, 2)

    async def judge() -> None:
        app = Host(BrowserScreen(path))
        app.curator_name = "bo"  # type: ignore[attr-defined]
        async with app.run_test(size=SIZE) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            await pilot.press("E")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert isinstance(app.screen, SupportScreen)
            await pilot.press("y", "p", *keys_of(GROUNDS), "ctrl+s")
            await app.workers.wait_for_complete()
            await pilot.pause()

    asyncio.run(judge())
    [ev] = _kinds(path, "support_judged")
    assert (ev.actor, ev.data["verdict"], ev.data["result"]) == ("human:bo", "partly", "unchecked")


def test_a_relay_asks_the_named_judge_of_its_own_models(tmp_path: Path) -> None:
    """In a relay the named model judges on its own client, whichever model took the session."""
    from relay_fixtures import minds, plan_over

    from curiosity_tui.runs.relay_runner import run_relay

    path = _ledger(tmp_path, support_judge="model:model-b")
    with (
        ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as a,
        ScriptedServer(responder=DemoResponder(preserve_sessions=(1,))) as b,
    ):
        plan = plan_over(a, b, ["model:A", "model:A", "model:A", "model:B"])
        led = Ledger.open(path, write=True)
        try:
            res = asyncio.run(run_relay(led, minds(plan), sessions=4))
        finally:
            led.close()
        assert not res.failed, res.failed
        assert a.requests_of("support-judge") == [] and b.requests_of("support-judge")
    judges = {j["by"] for e in _q1(path)["evidence"] for j in e.get("support", [])}
    assert judges == {"model:model-b"}
