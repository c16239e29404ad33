"""ModelClient through the real openai client against the scripted server (no network)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from curiosity_tui.errors import CuriosityError
from curiosity_tui.modelio.chat_call import render_messages
from curiosity_tui.modelio.client import (
    CallRecord,
    ModelCallError,
    ModelClient,
    ModelConfigError,
)
from curiosity_tui.modelio.schema_text import schema_text
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule
from curiosity_tui.protocol.schemas import (
    JudgeAfterResponse,
    JudgeBeforeResponse,
    judge_after_pairing,
)

KEY = "sk-test-SECRET-0123456789"
MSGS = [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Q?"}]
JB = {"framings": ["economic", "religious"], "dependencies": ["literacy rates"]}


def make_client(server: ScriptedServer, **kw: object) -> ModelClient:
    opts: dict = {"timeout_s": 5.0, "max_retries": 2, "retry_backoff_s": 0.001}
    opts.update(kw)
    return ModelClient(base_url=server.base_url, api_key=KEY, model="scripted", **opts)


def serve(*rules: ScriptRule, **kw: object) -> ScriptedServer:
    return ScriptedServer(Script(rules=list(rules)), **kw).start()


@pytest.fixture
def servers():
    started: list[ScriptedServer] = []

    def start(*rules: ScriptRule, **kw: object) -> ScriptedServer:
        s = serve(*rules, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def assert_no_key(*things: object) -> None:
    for thing in things:
        text = thing.model_dump_json() if isinstance(thing, BaseModel) else str(thing)
        assert KEY not in text
        assert "SECRET" not in text


async def test_complete_records_everything(servers):
    server = servers(ScriptRule(kind="answer", reply="The press mattered."))
    client = make_client(server)
    text, rec = await client.complete(
        kind="answer", session=3, messages=MSGS, max_tokens=100, internal=False
    )
    assert text == "The press mattered."
    assert isinstance(rec, CallRecord)
    assert (rec.kind, rec.session, rec.internal, rec.model) == ("answer", 3, False, "scripted")
    assert rec.finish_reason == "stop"
    assert rec.completion_tokens > 0 and rec.prompt_tokens > 0
    assert rec.retries == 0 and rec.error is None
    assert rec.request_text == render_messages(MSGS)
    assert rec.response_text == text
    assert client.calls == [rec]
    body = server.requests[0].body
    assert body["max_tokens"] == 100 and body["messages"] == MSGS


async def test_headers_arrive(servers):
    server = servers(ScriptRule(kind="candidate", reply="x"))
    client = make_client(server)
    await client.complete(kind="candidate", session=4, messages=MSGS, max_tokens=10, internal=True)
    req = server.requests[0]
    assert req.headers["x-curiosity-call"] == "candidate"
    assert req.headers["x-curiosity-session"] == "4"
    assert (req.kind, req.session) == ("candidate", 4)
    assert req.headers["authorization"] == "<redacted>"


async def test_429_then_success_is_retried(servers):
    server = servers(
        ScriptRule(kind="answer", fault="http_429", times=1), ScriptRule(kind="answer", reply="ok")
    )
    client = make_client(server)
    text, rec = await client.complete(
        kind="answer", session=1, messages=MSGS, max_tokens=10, internal=False
    )
    assert text == "ok" and rec.retries == 1 and rec.error is None
    assert len(server.requests) == 2


async def test_500_then_success_is_retried(servers):
    server = servers(
        ScriptRule(kind="answer", fault="http_500", times=2), ScriptRule(kind="answer", reply="ok")
    )
    client = make_client(server)
    text, rec = await client.complete(
        kind="answer", session=1, messages=MSGS, max_tokens=10, internal=False
    )
    assert text == "ok" and rec.retries == 2


async def test_persistent_500_fails_clearly(servers):
    server = servers(ScriptRule(kind="deliverable", fault="http_500"))
    client = make_client(server, max_retries=3)
    with pytest.raises(ModelCallError) as info:
        await client.complete(
            kind="deliverable", session=2, messages=MSGS, max_tokens=10, internal=False
        )
    err = info.value
    assert isinstance(err, CuriosityError)
    assert err.code == "http_500"
    assert "deliverable call (session 2" in str(err) and "HTTP 500" in str(err)
    assert "after 3 retries" in str(err)
    assert len(err.records) == 1 and err.records[0].retries == 3
    assert err.records[0].error and err.records[0].response_text == ""
    assert client.calls == err.records
    assert len(server.requests) == 4
    assert_no_key(err, err.records[0])


async def test_timeout_is_retried_then_succeeds(servers):
    server = servers(
        ScriptRule(kind="candidate", fault="timeout", times=1),
        ScriptRule(kind="candidate", reply="late but fine"),
        hang_s=5.0,
    )
    client = make_client(server, timeout_s=0.3)
    text, rec = await client.complete(
        kind="candidate", session=1, messages=MSGS, max_tokens=50, internal=True
    )
    assert text == "late but fine" and rec.retries == 1


async def test_persistent_timeout_fails(servers):
    server = servers(ScriptRule(kind="candidate", fault="timeout"), hang_s=5.0)
    client = make_client(server, timeout_s=0.2, max_retries=1)
    with pytest.raises(ModelCallError) as info:
        await client.complete(
            kind="candidate", session=1, messages=MSGS, max_tokens=50, internal=True
        )
    assert info.value.code == "timeout"
    assert "timed out" in str(info.value)
    assert info.value.records[0].retries == 1


async def test_length_on_complete_is_recorded(servers):
    long = "word " * 400
    server = servers(ScriptRule(kind="candidate", reply=long))
    client = make_client(server)
    text, rec = await client.complete(
        kind="candidate", session=1, messages=MSGS, max_tokens=260, internal=True
    )
    assert rec.finish_reason == "length" and rec.error is None
    assert rec.completion_tokens == 260
    assert long.startswith(text) and len(text) < len(long)


async def test_length_fault_on_complete(servers):
    server = servers(ScriptRule(kind="candidate", reply="abcdefgh", fault="length"))
    client = make_client(server)
    text, rec = await client.complete(
        kind="candidate", session=1, messages=MSGS, max_tokens=260, internal=True
    )
    assert (text, rec.finish_reason) == ("abcd", "length")


async def test_structured_valid(servers):
    server = servers(ScriptRule(kind="judge-before", reply=JB))
    client = make_client(server)
    value, rec = await client.structured(
        kind="judge-before",
        session=1,
        messages=MSGS,
        schema=JudgeBeforeResponse,
        max_tokens=300,
        internal=True,
    )
    assert isinstance(value, JudgeBeforeResponse)
    assert value.framings == ["economic", "religious"]
    assert rec.response_format == "json_schema" and not rec.repair
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "JudgeBeforeResponse"
    assert fmt["json_schema"]["schema"] == JudgeBeforeResponse.model_json_schema()
    assert client.json_schema_supported is True


async def test_invalid_json_then_valid_is_repaired(servers):
    server = servers(
        ScriptRule(kind="judge-before", reply=JB, fault="invalid_json", times=1),
        ScriptRule(kind="judge-before", reply=JB),
    )
    client = make_client(server)
    value, rec = await client.structured(
        kind="judge-before",
        session=1,
        messages=MSGS,
        schema=JudgeBeforeResponse,
        max_tokens=300,
        internal=True,
    )
    assert value.dependencies == ["literacy rates"]
    assert rec.repair is True
    first, second = client.calls
    assert first.error and "not valid JSON" in first.error and not first.repair
    # the repair request carries the bad reply and the error back
    msgs = server.requests[1].body["messages"]
    assert msgs[:2] == MSGS
    assert msgs[2] == {"role": "assistant", "content": first.response_text}
    assert msgs[3]["role"] == "user" and "not valid JSON" in msgs[3]["content"]
    assert second.request_text == render_messages(msgs)


async def test_schema_violation_twice_fails(servers):
    server = servers(ScriptRule(kind="judge-before", fault="schema_violation"))
    client = make_client(server)
    with pytest.raises(ModelCallError) as info:
        await client.structured(
            kind="judge-before",
            session=5,
            messages=MSGS,
            schema=JudgeBeforeResponse,
            max_tokens=300,
            internal=True,
        )
    err = info.value
    assert err.code == "schema_violation"
    assert "does not match the schema" in str(err)
    assert [r.repair for r in err.records] == [False, True]
    assert all(r.error for r in err.records)
    assert client.calls == err.records
    assert len(server.requests) == 2


async def test_caps_are_schema_violations(servers):
    too_many = {"framings": [f"f{i}" for i in range(6)], "dependencies": []}
    server = servers(
        ScriptRule(kind="judge-before", reply=too_many, times=1),
        ScriptRule(kind="judge-before", reply=JB),
    )
    client = make_client(server)
    value, _ = await client.structured(
        kind="judge-before",
        session=1,
        messages=MSGS,
        schema=JudgeBeforeResponse,
        max_tokens=300,
        internal=True,
    )
    assert len(value.framings) == 2
    assert "framings" in (client.calls[0].error or "")


async def test_validator_failure_gets_repair(servers):
    before = JudgeBeforeResponse.model_validate(JB)
    relisted = {
        "framings": [{"id": "F1", "verdict": "viable"}, {"id": "F3", "verdict": "viable"}],
        "dependencies": [{"id": "D1", "verdict": "excluded_or_settled"}],
    }
    good = {
        "framings": [{"id": "F1", "verdict": "viable"}, {"id": "F2", "verdict": "viable"}],
        "dependencies": [{"id": "D1", "verdict": "excluded_or_settled"}],
    }
    server = servers(
        ScriptRule(kind="judge-after", reply=relisted, times=1),
        ScriptRule(kind="judge-after", reply=good),
    )
    client = make_client(server)
    value, rec = await client.structured(
        kind="judge-after",
        session=1,
        messages=MSGS,
        schema=JudgeAfterResponse,
        max_tokens=300,
        internal=True,
        validator=judge_after_pairing(before),
    )
    assert rec.repair and [i.id for i in value.framings] == ["F1", "F2"]
    assert "F3" in (client.calls[0].error or "")


async def test_length_on_structured_fails(servers):
    server = servers(ScriptRule(kind="deliverable", reply=JB, fault="length"))
    client = make_client(server)
    with pytest.raises(ModelCallError) as info:
        await client.structured(
            kind="deliverable",
            session=2,
            messages=MSGS,
            schema=JudgeBeforeResponse,
            max_tokens=900,
            internal=False,
        )
    assert info.value.code == "length"
    assert "cut off" in str(info.value)
    assert [r.finish_reason for r in info.value.records] == ["length", "length"]


async def test_truncated_but_valid_structured_is_accepted(servers):
    server = servers(ScriptRule(kind="judge-before", reply=JB, finish_reason="length"))
    client = make_client(server)
    value, rec = await client.structured(
        kind="judge-before",
        session=1,
        messages=MSGS,
        schema=JudgeBeforeResponse,
        max_tokens=300,
        internal=True,
    )
    assert rec.finish_reason == "length" and value.framings


async def test_fallback_to_json_object(servers):
    server = servers(ScriptRule(kind="judge-before", reply=JB), supports_json_schema=False)
    client = make_client(server)
    for _ in range(2):
        value, rec = await client.structured(
            kind="judge-before",
            session=1,
            messages=MSGS,
            schema=JudgeBeforeResponse,
            max_tokens=300,
            internal=True,
        )
        assert value.framings == ["economic", "religious"]
        assert rec.response_format == "json_object"
    assert client.json_schema_supported is False
    kinds = [r.body["response_format"]["type"] for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # remembered
    assert client.calls[0].retries == 1 and client.calls[1].retries == 0
    # the schema travels in the last user turn instead (Gemma's chat template drops a
    # trailing system message)
    sent = server.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    last = sent[-1]
    assert last["content"].startswith("Q?") and "JSON schema" in last["content"]
    # the schema as a model reads it: compact (issue 27 item 7)
    assert schema_text(JudgeBeforeResponse.model_json_schema()) in last["content"]


async def test_markup_and_control_characters_come_back_verbatim(servers):
    nasty = "[bold red]boom[/] \x1b[31mred\x1b[0m [link=http://x]y[/link] \x07\x00 end\r\n"
    payload = {"framings": [nasty], "dependencies": ["[/]"]}
    server = servers(
        ScriptRule(kind="answer", reply=nasty), ScriptRule(kind="judge-before", reply=payload)
    )
    client = make_client(server)
    text, rec = await client.complete(
        kind="answer", session=1, messages=MSGS, max_tokens=100, internal=False
    )
    assert text == nasty and rec.response_text == nasty
    value, _ = await client.structured(
        kind="judge-before",
        session=1,
        messages=MSGS,
        schema=JudgeBeforeResponse,
        max_tokens=300,
        internal=True,
    )
    assert value.framings == [nasty] and value.dependencies == ["[/]"]


async def test_raw_control_characters_inside_json_strings_are_kept(servers):
    raw = '{"framings": ["tab\there\x01"], "dependencies": []}'
    server = servers(ScriptRule(kind="judge-before", reply=raw))
    client = make_client(server)
    value, _ = await client.structured(
        kind="judge-before",
        session=1,
        messages=MSGS,
        schema=JudgeBeforeResponse,
        max_tokens=300,
        internal=True,
    )
    assert value.framings == ["tab\there\x01"]


async def test_code_fenced_json_is_accepted(servers):
    server = servers(ScriptRule(kind="judge-before", reply="```json\n" + json.dumps(JB) + "\n```"))
    client = make_client(server)
    value, rec = await client.structured(
        kind="judge-before",
        session=1,
        messages=MSGS,
        schema=JudgeBeforeResponse,
        max_tokens=300,
        internal=True,
    )
    assert value.framings and not rec.repair


async def test_api_key_appears_nowhere(servers):
    server = servers(
        ScriptRule(kind="answer", reply="fine", times=1),
        ScriptRule(kind="answer", fault="http_500"),
        ScriptRule(kind="judge-before", fault="schema_violation"),
    )
    client = make_client(server, max_retries=1)
    await client.complete(kind="answer", session=1, messages=MSGS, max_tokens=10, internal=False)
    errors: list[ModelCallError] = []
    for coro in (
        client.complete(kind="answer", session=1, messages=MSGS, max_tokens=10, internal=False),
        client.structured(
            kind="judge-before",
            session=1,
            messages=MSGS,
            schema=JudgeBeforeResponse,
            max_tokens=10,
            internal=True,
        ),
    ):
        with pytest.raises(ModelCallError) as info:
            await coro
        errors.append(info.value)
    assert_no_key(repr(client), *client.calls, *errors, *(e.reason for e in errors))
    assert all(KEY not in json.dumps(r.headers) for r in server.requests)


async def test_key_from_environment_and_config_errors(monkeypatch, servers):
    server = servers(ScriptRule(kind="answer", reply="env ok"))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    client = ModelClient(model="scripted", retry_backoff_s=0.001)
    text, _ = await client.complete(
        kind="answer", session=1, messages=MSGS, max_tokens=10, internal=False
    )
    assert text == "env ok" and client.base_url == server.base_url
    assert KEY not in repr(client)
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        ModelClient(model="m")
    # a local server needs no key
    local = ModelClient(base_url=server.base_url, model="scripted")
    text, _ = await local.complete(
        kind="answer", session=1, messages=MSGS, max_tokens=10, internal=False
    )
    assert text == "env ok"
    with pytest.raises(ModelConfigError, match="embedding model"):
        await local.embed(["a"], session=1)


async def test_unscripted_kind_is_a_clear_400(servers):
    server = servers()
    client = make_client(server)
    with pytest.raises(ModelCallError) as info:
        await client.complete(
            kind="curator", session=9, messages=MSGS, max_tokens=10, internal=False
        )
    assert info.value.code == "http_400"
    assert "no reply scripted for kind='curator' session=9" in str(info.value)
    assert info.value.records[0].retries == 0


async def test_concurrent_calls(servers):
    import asyncio

    server = servers(ScriptRule(kind="candidate", reply="c"), latency_ms=50)
    client = make_client(server)
    results = await asyncio.gather(
        *(
            client.complete(
                kind="candidate", session=1, messages=MSGS, max_tokens=10, internal=True
            )
            for _ in range(3)
        )
    )
    assert [t for t, _ in results] == ["c", "c", "c"] and len(client.calls) == 3


async def test_embed(servers):
    server = servers()
    client = make_client(server, embedding_model="emb")
    vecs, rec = await client.embed(["printing press", "printing presses", ""], session=2)
    assert len(vecs) == 3 and len(vecs[0]) == 64
    assert rec.kind == "embeddings" and rec.model == "emb" and rec.session == 2
    assert rec.prompt_tokens > 0 and rec.internal
    req = server.requests[0]
    assert req.path == "/v1/embeddings" and req.headers["x-curiosity-call"] == "embeddings"
    assert req.body["input"][2] == " "


async def test_embed_retries_429(servers):
    server = servers(ScriptRule(kind="embeddings", fault="http_429", times=1))
    client = make_client(server, embedding_model="emb")
    vecs, rec = await client.embed(["a b"], session=1)
    assert rec.retries == 1 and len(vecs) == 1


async def test_async_with_closes_and_client_stays_usable(servers):
    server = servers(ScriptRule(kind="answer", reply="ok"))
    async with make_client(server) as client:
        await client.complete(kind="answer", session=1, messages=MSGS, max_tokens=5, internal=False)
    text, _ = await client.complete(
        kind="answer", session=1, messages=MSGS, max_tokens=5, internal=False
    )
    assert text == "ok" and len(client.calls) == 2
    await client.aclose()


async def test_clients_share_connections_per_loop_and_dropping_one_is_safe(servers):
    import gc

    server = servers(ScriptRule(kind="answer", reply="ok"))
    a, b = make_client(server), make_client(server)
    assert a._client() is b._client()  # same endpoint, key and timeout: one pool
    other = ModelClient(base_url=server.base_url, api_key="another", model="scripted")
    assert other._client() is not a._client()
    shared = a._client()
    del a
    gc.collect()
    assert b._client() is shared  # the pool outlives any one ModelClient
    await b.aclose()
    text, _ = await b.complete(
        kind="answer", session=1, messages=MSGS, max_tokens=5, internal=False
    )
    assert text == "ok" and b._client() is not shared


async def test_refusal_on_complete_is_returned_and_flagged(servers):
    server = servers(ScriptRule(kind="answer", reply="I can't help with that.", fault="refusal"))
    client = make_client(server)
    text, rec = await client.complete(
        kind="answer", session=1, messages=MSGS, max_tokens=50, internal=False
    )
    assert text == "I can't help with that." and rec.refusal and rec.error is None


async def test_refusal_on_structured_gets_repair_then_fails(servers):
    server = servers(ScriptRule(kind="judge-before", reply="No.", fault="refusal"))
    client = make_client(server)
    with pytest.raises(ModelCallError) as info:
        await client.structured(
            kind="judge-before",
            session=1,
            messages=MSGS,
            schema=JudgeBeforeResponse,
            max_tokens=50,
            internal=True,
        )
    assert info.value.code == "refusal" and "refused: No." in str(info.value)
    assert [r.refusal for r in info.value.records] == [True, True]


async def test_switches_to_max_completion_tokens_when_asked(servers):
    server = servers(ScriptRule(kind="answer", reply="ok"), accepts_max_tokens=False)
    client = make_client(server)
    for _ in range(2):
        text, _ = await client.complete(
            kind="answer", session=1, messages=MSGS, max_tokens=7, internal=False
        )
        assert text == "ok"
    bodies = [r.body for r in server.requests]
    assert "max_tokens" in bodies[0] and bodies[1]["max_completion_tokens"] == 7
    assert "max_tokens" not in bodies[2]  # remembered
    assert client.token_param == "max_completion_tokens"
