"""Sampling is part of the experiment (issue 23.1): a plan's ``[sampling]`` table and the
``--sampling`` flags are sent on every call kind (asserted on the wire, real ``openai`` client
against the loopback scripted server), recorded on every CallRecord, negotiated when the server
refuses a parameter, and left out where "server-default" says so. Old ledgers are unchanged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.ledger.sampling_record import PROTOCOL_DEFAULTS, SamplingTable, group_of
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.modelio.sampling import call_seed
from curiosity_tui.offline.research import ResearchResponder
from curiosity_tui.offline.scripted_server import LLAMA_DEFAULTS, ScriptedServer
from curiosity_tui.runs.runner import run_ledger

SEED = "Did the printing press cause the Reformation?"
PLAN = """\
name = "sampled"
configurations = [{configs}]
runs = 1
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
model = "scripted"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "A"]]
metrics = ["max_depth"]
{sampling}
"""
SAMPLING = """
[sampling]
seed = 11
temperature = 0.3
[sampling.candidate]
temperature = 0.9
top_p = 0.9
[sampling.judge]
temperature = 0.0
[sampling.checker]
stop = ["<<END>>"]
"""
EXPECTED = {  # group -> (temperature, top_p, stop) the wire must carry
    "candidate": (0.9, 0.9, None),
    "judge": (0.0, 1.0, None),
    "checker": (0.3, 1.0, ["<<END>>"]),
    "deliverable": (0.3, 0.95, None),
    "curator": (0.3, 1.0, None),
}


def _pilot(tmp_path: Path, server: ScriptedServer, sampling: str = SAMPLING, *extra: str) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(configs='"C+cur", "A"', sampling=sampling))
    out = tmp_path / "out"
    argv = ["pilot", "run", str(plan), "--out", str(out), "--unregistered", "--workers", "1"]
    argv += ["--base-url", server.base_url, "--api-key", "x", *extra]
    assert main(argv) == 0
    return out


def _run_calls(server: ScriptedServer) -> list[Any]:
    return [
        r
        for r in server.requests
        if r.path.endswith("/chat/completions") and not r.kind.startswith("probe")
    ]


def _ledger_calls(out: Path) -> list[Any]:
    calls = []
    for path in sorted(out.iterdir()):
        if (path / "journal.jsonl").exists():
            with Ledger.open(path) as led:
                for rec in led.session_records():
                    calls.extend(c for c in rec.calls if c.response_format != "embeddings")
    return calls


def test_plan_sampling_is_sent_on_every_call_kind_and_recorded(tmp_path: Path) -> None:
    with ScriptedServer(responder=ResearchResponder()) as server:
        out = _pilot(tmp_path, server)
        sent = _run_calls(server)
    kinds = {r.kind for r in sent}
    assert {"candidate", "judge-before", "judge-after", "deliverable", "answer"} <= kinds
    assert "curator" in kinds
    for r in sent:
        temperature, top_p, stop = EXPECTED[group_of(r.kind) or ""]
        assert (r.body["temperature"], r.body["top_p"]) == (temperature, top_p), r.kind
        assert r.body.get("stop") == stop, r.kind
        assert isinstance(r.body["seed"], int) and 0 <= r.body["seed"] < 2**31
    # the three candidates of one session share a prompt but not a draw
    by_session: dict[tuple[str, str], set[int]] = {}
    for r in sent:
        if r.kind == "candidate":
            key = (r.headers["x-curiosity-run"], r.headers["x-curiosity-session"])
            by_session.setdefault(key, set()).add(r.body["seed"])
    assert by_session and all(len(seeds) == 3 for seeds in by_session.values())
    # each seed is the documented derivation: run seed, run, session, draw
    run, session = next(iter(by_session))
    assert by_session[(run, session)] == {
        call_seed(11, run, int(session), f"candidate-{i}") for i in (1, 2, 3)
    }
    # every call of the ledgers records what went on the wire
    recorded = _ledger_calls(out)
    assert len(recorded) == len(sent)
    wire = sorted((r.kind, r.body["seed"], r.body["temperature"]) for r in sent)
    kept = [(c.kind, c.sampling.seed, c.sampling.temperature) for c in recorded if c.sampling]
    assert sorted(kept) == wire
    for c in recorded:
        assert c.sampling is not None and c.sampling.refused == []
        assert c.sampling.stop == (EXPECTED[group_of(c.kind) or ""][2] or [])
    with Ledger.open(out / "C+cur-r0") as led:
        table = SamplingTable.model_validate(led.meta.options["sampling"])
    assert table.candidate is not None and table.candidate.temperature == 0.9
    assert table.rater == PROTOCOL_DEFAULTS["rater"].model_copy(update={"temperature": 0.3})


def test_a_rerun_asks_for_the_same_draws(tmp_path: Path) -> None:
    seeds = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        with ScriptedServer(responder=ResearchResponder()) as server:
            _pilot(tmp_path / name, server)
            seeds.append(
                sorted(
                    (r.headers["x-curiosity-run"], r.kind, r.body["seed"])
                    for r in _run_calls(server)
                )
            )
    assert seeds[0] == seeds[1]


def test_flags_override_the_plan_and_server_default_is_not_sent(tmp_path: Path) -> None:
    with ScriptedServer(responder=ResearchResponder(), llama_props=True) as server:
        out = _pilot(
            tmp_path,
            server,
            SAMPLING,
            "--sampling",
            "judge.temperature=server-default",
            "--sampling",
            "seed=server-default",
        )
        sent = _run_calls(server)
    judges = [r for r in sent if r.kind.startswith("judge")]
    assert judges and all("temperature" not in r.body and r.body["top_p"] == 1.0 for r in judges)
    assert all("seed" not in r.body for r in sent)
    assert all(r.body["temperature"] == 0.9 for r in sent if r.kind == "candidate")
    with Ledger.open(out / "C+cur-r0") as led:
        endpoint = led.meta.endpoint
        calls = [c for rec in led.session_records() for c in rec.calls if c.sampling]
    # the probe recorded what "server-default" means on this server (llama.cpp /props)
    assert endpoint is not None and endpoint.sampling_defaults == LLAMA_DEFAULTS
    judge = next(c for c in calls if c.kind == "judge-after")
    assert judge.sampling is not None
    assert (judge.sampling.temperature, judge.sampling.seed) == ("server-default",) * 2


def test_a_server_refusing_seed_is_negotiated_and_recorded(tmp_path: Path) -> None:
    with ScriptedServer(responder=ResearchResponder(), rejects=("seed",)) as server:
        out = _pilot(tmp_path, server)
        sent = _run_calls(server)
        probes = [r for r in server.requests if r.kind == "probe-sampling"]
    # the probe found it once: one refused trial, one without seed; no run call sent it
    assert [("seed" in r.body) for r in probes] == [True, False]
    assert sent and all("seed" not in r.body and "temperature" in r.body for r in sent)
    with Ledger.open(out / "C+cur-r0") as led:
        endpoint = led.meta.endpoint
        calls = [c for rec in led.session_records() for c in rec.calls if c.sampling]
    assert endpoint is not None and list(endpoint.refused_sampling) == ["seed"]
    assert "'seed'" in endpoint.refused_sampling["seed"]
    assert calls and all(c.sampling is not None and c.sampling.refused == ["seed"] for c in calls)


def test_a_refusal_met_mid_run_is_negotiated_on_the_call(tmp_path: Path) -> None:
    """A server that starts refusing top_p after the probe: the call goes again without it and
    says so; later calls of the client leave it out."""
    led = Ledger.create(
        tmp_path / "run",
        RunMeta(
            name="run",
            seed=SEED,
            config="C-cur",
            options={"sampling": SamplingTable().resolved().model_dump(mode="json")},
        ),
    )
    with ScriptedServer(responder=ResearchResponder(), rejects=("top_p",)) as server:

        async def go() -> Any:
            async with ModelClient(base_url=server.base_url, api_key="x", model="m") as client:
                return await run_ledger(led, client, sessions=1)

        try:
            result = asyncio.run(go())
        finally:
            led.close()
        sent = _run_calls(server)
    assert not result.failed
    refused = [r for r in sent if "top_p" in r.body]
    # only the first round's calls, in flight together when the first 400 came back, sent it
    assert refused and {r.kind for r in refused} <= {"candidate", "judge-before", "checker"}
    with Ledger.open(tmp_path / "run") as led2:
        calls = led2.session_records()[0].calls
    assert all(c.sampling is not None and c.sampling.refused == ["top_p"] for c in calls)
    assert {c.kind for c in calls} >= {"candidate", "judge-after", "deliverable"}


def test_an_old_ledger_sends_nothing_and_says_so(tmp_path: Path) -> None:
    """A ledger created before sampling was recorded keeps being run as it was: nothing sent,
    each call recording server-default explicitly."""
    led = Ledger.create(tmp_path / "old", RunMeta(name="old", seed=SEED, config="C-cur"))
    with ScriptedServer(responder=ResearchResponder()) as server:

        async def go() -> Any:
            async with ModelClient(base_url=server.base_url, api_key="x", model="m") as client:
                return await run_ledger(led, client, sessions=1)

        try:
            assert not asyncio.run(go()).failed
        finally:
            led.close()
        sent = _run_calls(server)
    assert sent and not any(k in r.body for r in sent for k in ("temperature", "top_p", "seed"))
    with Ledger.open(tmp_path / "old") as led2:
        calls = led2.session_records()[0].calls
    assert all(c.sampling is not None and c.sampling.seed == "server-default" for c in calls)


def test_ledger_new_records_the_protocol_defaults(tmp_path: Path) -> None:
    path = tmp_path / "fresh"
    assert main(["ledger", "new", str(path), "--seed", SEED, "--config", "C+cur"]) == 0
    with Ledger.open(path) as led:
        table = SamplingTable.model_validate(led.meta.options["sampling"])
    assert table.candidate == PROTOCOL_DEFAULTS["candidate"]
    assert table.candidate.temperature > 0  # D is a disagreement of sampled candidates
    assert table.judge == PROTOCOL_DEFAULTS["judge"] and table.judge.temperature == 0.0
    assert table.seed == 0


@pytest.mark.parametrize(
    ("sampling", "needle"),
    [
        ("[sampling]\ntemperature = 5\n", "sampling.temperature"),
        ("[sampling.candidate]\ntop_p = 0\n", "sampling.candidate.top_p"),
        ("[sampling]\nseeds = 3\n", "unknown key"),
        ("[sampling.judges]\ntemperature = 0\n", "unknown key"),
    ],
)
def test_a_bad_sampling_table_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sampling: str, needle: str
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(configs='"C+cur", "A"', sampling=sampling))
    out = tmp_path / "out"
    code = main(["pilot", "run", str(plan), "--out", str(out), "--unregistered", "--scripted"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1
    assert str(plan) in err[0] and needle in err[0] and "Traceback" not in err[0]
    assert not out.exists()


@pytest.mark.parametrize(
    "flag", ["temperature=hot", "candidate.temperature=3", "nonsense", "judges.top_p=0.5"]
)
def test_a_bad_sampling_flag_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(configs='"C+cur", "A"', sampling=""))
    out = tmp_path / "out"
    argv = ["pilot", "run", str(plan), "--out", str(out), "--unregistered", "--scripted"]
    code = main([*argv, "--sampling", flag])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and f"--sampling {flag!r}" in err[0]
    assert not out.exists()


def test_call_seeds_are_stable_and_distinct() -> None:
    assert call_seed(0, "C+cur-r0", 1, "candidate-1") == call_seed(0, "C+cur-r0", 1, "candidate-1")
    seeds = {
        call_seed(s, run, t, draw)
        for s in (0, 1)
        for run in ("C+cur-r0", "C+cur-r1")
        for t in (1, 2)
        for draw in ("candidate-1", "candidate-2", "judge-after")
    }
    assert len(seeds) == 24
    # the separator keeps ("1", "2") and ("12", "") apart
    assert call_seed(1, "2", 3, "x") != call_seed(12, "", 3, "x")
    assert json.dumps(call_seed(5, "r", 1, "d")).isdigit()


def test_a_top_level_flag_sets_every_group() -> None:
    """``--sampling temperature=0`` over a plan (or a ledger's resolved table) that gives the
    candidates 0.9: every group, candidates included, is sent 0."""
    from curiosity_tui.ledger.sampling_record import GROUPS

    plan = SamplingTable.model_validate(
        {"seed": 3, "candidate": {"temperature": 0.9, "top_p": 0.9}}
    ).resolved()
    flagged = plan.with_override("temperature", 0).resolved()
    assert all(getattr(flagged, g).temperature == 0 for g in GROUPS)
    assert flagged.candidate is not None and flagged.candidate.top_p == 0.9  # untouched
    one = plan.with_override("judge.top_p", 0.5).resolved()
    assert one.judge is not None and one.judge.top_p == 0.5
    assert one.candidate == plan.candidate and one.seed == 3
