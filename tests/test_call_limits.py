"""Per-call token caps inside the context, the repair turn, per-call schemas on the wire
(issue 11 items 2 and 3), against the scripted server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.modelio.json_reply import REPAIR_EXCERPT_CHARS
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule
from curiosity_tui.protocol.call_specs import judge_before_spec
from curiosity_tui.protocol.context import SessionSettings, prompt_estimate
from curiosity_tui.protocol.schemas import JudgeBeforeResponse
from curiosity_tui.protocol.session import SessionFailure, run_session
from curiosity_tui.runs.runner import run_ledger

MSGS = [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Q?"}]
JB = {"framings": ["economic", "religious"], "dependencies": ["literacy rates"]}
SEED = "Did the printing press cause the Reformation?"


def _client(server: ScriptedServer) -> ModelClient:
    return ModelClient(
        base_url=server.base_url, api_key="sk-x", model="scripted", retry_backoff_s=0.001
    )


async def test_per_call_schema_and_cap_go_on_the_wire_and_into_the_record() -> None:
    spec = judge_before_spec()
    wire = spec.json_schema("full")
    with ScriptedServer(Script(rules=[ScriptRule(kind="judge-before", reply=JB)])) as srv:
        client = _client(srv)
        _, rec = await client.structured(
            kind="judge-before",
            session=1,
            messages=MSGS,
            schema=spec.model,
            max_tokens=321,
            internal=True,
            validator=spec.check,
            wire_schema=wire,
            dialect="full",
        )
        await client.aclose()
        body = srv.requests[0].body
    assert body["response_format"]["json_schema"]["schema"] == wire
    assert body["max_tokens"] == 321
    assert (rec.max_tokens, rec.schema_dialect) == (321, "full")
    dumped = rec.model_dump()
    assert dumped["max_tokens"] == 321 and dumped["schema_dialect"] == "full"


async def test_a_cut_off_reply_is_not_sent_back_the_call_starts_again() -> None:
    rules = [
        ScriptRule(kind="deliverable", reply=JB, fault="length", times=1),
        ScriptRule(kind="deliverable", reply=JB),
    ]
    with ScriptedServer(Script(rules=rules)) as srv:
        client = _client(srv)
        value, rec = await client.structured(
            kind="deliverable",
            session=1,
            messages=MSGS,
            schema=JudgeBeforeResponse,
            max_tokens=900,
            internal=False,
        )
        await client.aclose()
        first, second = (r.body["messages"] for r in srv.requests)
    assert value.framings and rec.repair
    assert len(second) == len(first)  # no assistant turn: the cut-off reply is not re-sent
    assert all(m["role"] != "assistant" for m in second)
    assert second[-1]["content"].startswith("Q?") and "cut off" in second[-1]["content"]


async def test_the_retry_after_a_cut_sends_a_shorter_schema() -> None:
    """Issue 27: SmolLM2 filled every optional field of a deliverable to its length bound and
    was cut at its cap twice. The retry after a cut sends the spec's shorter form: guidance
    counts and lengths halved in full, the enforced open layer as it was; the reply still
    validates against the same rules."""
    from curiosity_tui.protocol.call_specs import deliverable_spec

    spec = deliverable_spec(
        node_ids=["q1", "q2"],
        focus_id="q1",
        requirement_ids=["q1.f1", "q1.f2"],
        open_layer_min=1,
        checks_in_deliverable=True,
        downgrades_allowed=True,
        preserve=False,
    )
    reply = {
        "answer": "Printing.",
        "actions": [],
        "new_questions": [],
        "open_layer": {
            "node_status": "open",
            "living_questions": [{"text": "Who printed the pamphlets?", "parent": "q1"}],
            "return_condition": None,
        },
        "facts": [],
        "checks": [],
        "downgrade_proposals": [],
    }
    rules = [
        ScriptRule(kind="deliverable", reply=reply, fault="length", times=1),
        ScriptRule(kind="deliverable", reply=reply),
    ]
    with ScriptedServer(Script(rules=rules)) as srv:
        client = _client(srv)
        value, rec = await client.structured(
            kind="deliverable",
            session=1,
            messages=MSGS,
            schema=spec.model,
            max_tokens=900,
            internal=False,
            validator=spec.check,
            wire_schema=spec.json_schema("full"),
            dialect="full",
            shorter_schema=lambda: spec.shorter().json_schema("full"),
        )
        await client.aclose()
        first, second = (r.body["response_format"]["json_schema"]["schema"] for r in srv.requests)
    assert rec.repair and rec.earlier[0].finish_reason == "length"
    assert first == spec.json_schema("full") and second == spec.shorter().json_schema("full")
    props, shorter = first["properties"], second["properties"]
    assert (props["actions"]["maxItems"], shorter["actions"]["maxItems"]) == (2, 1)
    assert (props["checks"]["maxItems"], shorter["checks"]["maxItems"]) == (2, 1)
    assert (
        props["answer"]["anyOf"][0]["maxLength"],
        shorter["answer"]["anyOf"][0]["maxLength"],
    ) == (
        1000,
        500,
    )
    living = shorter["open_layer"]["properties"]["living_questions"]["properties"]
    assert "anyOf" not in living["Q1"]  # the enforced open layer is as it was
    # strict says no lengths, but its bounded lists are slots: the retry has half as many
    strict, strict_short = spec.json_schema("strict"), spec.shorter().json_schema("strict")
    assert list(strict["properties"]["actions"]["properties"]) == ["action_1", "action_2"]
    assert list(strict_short["properties"]["actions"]["properties"]) == ["action_1"]
    assert strict_short["properties"]["answer"] == strict["properties"]["answer"]
    assert spec.record(value).open_layer.living_questions[0].text == "Who printed the pamphlets?"


async def test_a_long_rejected_reply_goes_back_as_a_short_excerpt() -> None:
    long_reply = {"unexpected": "word " * 800}
    rules = [
        ScriptRule(kind="judge-before", reply=long_reply, fault="schema_violation", times=1),
        ScriptRule(kind="judge-before", reply=JB),
    ]
    with ScriptedServer(Script(rules=rules)) as srv:
        client = _client(srv)
        await client.structured(
            kind="judge-before",
            session=1,
            messages=MSGS,
            schema=JudgeBeforeResponse,
            max_tokens=2000,
            internal=True,
        )
        await client.aclose()
        repair = srv.requests[1].body["messages"]
    sent = sum(len(m["content"]) for m in repair[len(MSGS) :])
    assert len(json.dumps(long_reply)) > 3000
    assert sent < REPAIR_EXCERPT_CHARS + 600  # the excerpt and the error, not the reply
    assert "does not match the schema" in repair[-1]["content"]


def test_fit_lowers_a_cap_to_what_the_context_leaves() -> None:
    meta = RunMeta(name="r", seed=SEED, config="C-cur")
    st = SessionSettings.from_meta(meta, context_window=1000)
    msgs = [{"role": "user", "content": "x" * 1500}]
    assert st.fit(900, msgs) == 1000 - prompt_estimate(msgs) < 900
    assert st.fit(100, msgs) == 100
    assert SessionSettings.from_meta(meta).fit(900, msgs) == 900  # window unknown: no limit
    with_meta = RunMeta(name="r", seed=SEED, options={"context_window": 2048})
    assert SessionSettings.from_meta(with_meta).context_window == 2048


def _demo_ledger(tmp_path: Path, contract: str = "pilot-01") -> Ledger:
    meta = RunMeta(name="c", seed=SEED, config="C-cur", contract=contract)  # type: ignore[arg-type]
    return Ledger.create(tmp_path / "c", meta)


def test_every_call_fits_a_known_context_window(tmp_path: Path) -> None:
    window = 1800
    led = _demo_ledger(tmp_path)
    st = SessionSettings.from_meta(led.meta, context_window=window)
    with ScriptedServer(responder=DemoResponder()) as srv:
        client = _client(srv)

        async def go() -> None:
            try:
                await run_ledger(led, client, sessions=2, settings=st)
            finally:
                await client.aclose()

        asyncio.run(go())
        sent = [(r.kind, r.body) for r in srv.requests if "messages" in r.body]
    assert led.last_session == 2
    led.close()
    for _, body in sent:
        assert body["max_tokens"] + prompt_estimate(body["messages"]) <= window
    deliverables = [b["max_tokens"] for k, b in sent if k == "deliverable"]
    assert len(deliverables) == 2 and all(n < 4000 - 3 * 260 for n in deliverables)


def test_a_context_too_small_for_the_deliverable_fails_the_session_in_one_line(
    tmp_path: Path,
) -> None:
    led = _demo_ledger(tmp_path)
    st = SessionSettings.from_meta(led.meta, context_window=700)
    with ScriptedServer(responder=DemoResponder()) as srv:
        client = _client(srv)

        async def go() -> None:
            try:
                await run_session(led, client, 1, settings=st)
            finally:
                await client.aclose()

        with pytest.raises(SessionFailure) as info:
            asyncio.run(go())
    assert "700-token context" in info.value.reason and "\n" not in info.value.reason
    assert led.last_session == 0
    led.close()


def test_cli_caps_and_dialect_reach_every_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run"
    assert main(["ledger", "new", str(path), "--seed", SEED, "--config", "C-cur"]) == 0
    args = ["run", str(path), "--sessions", "1", "--scripted", "--schema-dialect", "full"]
    assert main([*args, "--cap", "candidate=120", "--cap", "judge=400"]) == 0
    with Ledger.open(path) as led:
        calls = led.session_records()[0].calls
    by_kind = {c.kind: c for c in calls}
    assert [c.max_tokens for c in calls if c.kind == "candidate"] == [120, 120, 120]
    assert by_kind["judge-before"].max_tokens == 400 == by_kind["judge-after"].max_tokens
    structured = [c for c in calls if c.response_format == "json_schema"]
    assert structured and {c.schema_dialect for c in structured} == {"full"}
    capsys.readouterr()


@pytest.mark.parametrize("bad", ["candidate", "nonsense=5", "judge=0", "judge=lots"])
def test_cli_rejects_a_bad_cap_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    path = tmp_path / "run"
    assert main(["ledger", "new", str(path), "--seed", SEED]) == 0
    capsys.readouterr()
    rc = main(["run", str(path), "--sessions", "1", "--scripted", "--cap", bad])
    err = capsys.readouterr().err
    assert rc != 0 and "--cap" in err and len(err.strip().splitlines()) == 1
    with Ledger.open(path) as led:
        assert led.last_session == 0


def test_model_call_error_is_still_raised_for_two_cut_offs() -> None:
    rules = [ScriptRule(kind="deliverable", reply=JB, fault="length")]

    async def go() -> None:
        with ScriptedServer(Script(rules=rules)) as srv:
            client = _client(srv)
            try:
                await client.structured(
                    kind="deliverable",
                    session=1,
                    messages=MSGS,
                    schema=JudgeBeforeResponse,
                    max_tokens=900,
                    internal=False,
                )
            finally:
                await client.aclose()

    with pytest.raises(ModelCallError) as info:
        asyncio.run(go())
    assert info.value.code == "length"
