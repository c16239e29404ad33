"""The endpoint probe against scripted servers playing llama-server, llama-cpp-python and a
server without embeddings; and its record in the journal (replay verifies)."""

from __future__ import annotations

import pytest

from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.ledger.replay import replay, verify
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.modelio.endpoint import (
    EndpointOptions,
    EndpointUnusable,
    prepare_endpoint,
    probe_endpoint,
    problems,
    record_endpoint,
)
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule


@pytest.fixture
def servers():
    started: list[ScriptedServer] = []

    def start(*rules: ScriptRule, **kw: object) -> ScriptedServer:
        s = ScriptedServer(Script(rules=list(rules)), **kw).start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def client_for(server: ScriptedServer) -> ModelClient:
    return ModelClient(base_url=server.base_url, api_key="k", model="scripted", timeout_s=5)


async def test_llama_server_like_endpoint(servers):
    server = servers(llama_props=True, context_window=2048, one_slot=True)
    client = client_for(server)
    caps = await prepare_endpoint(client, EndpointOptions(embedding_model="minilm"))
    assert caps.server == "llama.cpp"
    assert [(t.format, t.outcome) for t in caps.trials] == [("json_schema", "honoured")] * 2
    assert caps.trials[1].detail.startswith("dialect full: the server enforces item counts")
    assert caps.response_format == "json_schema"
    assert (caps.context_window, caps.context_source, caps.slots) == (2048, "props", 1)
    assert caps.embeddings == "served" and caps.embedder == "endpoint:minilm"
    assert caps.model_listed is True
    assert client.server_slots == 1 and client.context_window == 2048
    assert client.response_format == "json_schema"
    assert client.calls == []  # the probe leaves no call records behind


async def test_json_schema_500_negotiates_json_object(servers):
    server = servers(supports_json_schema=False, json_schema_status=500)
    client = client_for(server)
    caps = await prepare_endpoint(client, EndpointOptions())
    assert [(t.format, t.outcome) for t in caps.trials] == [
        ("json_schema", "refused"),
        ("json_object", "honoured"),  # with response_format.schema: enforced (its enum value)
        ("json_object", "unconstrained"),  # the dialect trial: counts not followed, so strict
    ]
    assert "HTTP 500" in caps.trials[0].detail
    assert caps.trials[1].detail.startswith("schema enforced")
    assert caps.response_format == "json_object" and client.response_format == "json_object"
    assert caps.json_object_schema and client.json_object_schema
    assert "json_object+schema" in caps.summary()
    assert caps.schema_dialect == "strict" and "dialect strict" in caps.trials[2].detail
    assert len([r for r in server.requests if r.kind == "probe"]) == 3  # the 500 not retried


async def test_json_object_carries_the_schema_only_where_the_server_enforces_it(servers):
    """llama-cpp-python answers json_schema with 500 but turns response_format.schema into a
    grammar: the probe finds that and every structured call then sends the call's schema. A
    server that ignores the key (the probe's enum value is not in the reply) is not credited."""
    from curiosity_tui.protocol.schemas import JudgeBeforeResponse

    server = servers(supports_json_schema=False, json_schema_status=500)
    client = client_for(server)
    await prepare_endpoint(client, EndpointOptions())
    wire = {"type": "object", "properties": {"framings": {"type": "array"}}}
    _, kwargs = client._request(
        [{"role": "user", "content": "x"}], 50, JudgeBeforeResponse, "json_object", wire
    )
    assert kwargs["extra_body"]["response_format"] == {"type": "json_object", "schema": wire}

    deaf = servers(
        ScriptRule(kind="probe", reply='{"probe": "whatever"}'),
        supports_json_schema=False,
        json_schema_status=500,
    )
    c2 = client_for(deaf)
    caps = await prepare_endpoint(c2, EndpointOptions())
    assert caps.response_format == "json_object" and not caps.json_object_schema
    assert [(t.format, t.outcome) for t in caps.trials] == [
        ("json_schema", "refused"),
        ("json_object", "unconstrained"),  # the schema key ignored: the probe's enum is missing
        ("json_object", "honoured"),
    ]
    assert caps.trials[1].detail.startswith("schema not enforced")
    _, kwargs = c2._request(
        [{"role": "user", "content": "x"}], 50, JudgeBeforeResponse, "json_object", wire
    )
    assert kwargs["extra_body"]["response_format"] == {"type": "json_object"}


async def test_a_fixed_format_the_server_refuses_names_the_flag(servers):
    server = servers(supports_json_schema=False, json_schema_status=500)
    caps = await probe_endpoint(client_for(server), EndpointOptions(response_format="json_schema"))
    assert caps.response_format is None
    (problem,) = problems(caps)
    assert "--response-format json_schema" in problem and "--response-format auto" in problem
    with pytest.raises(EndpointUnusable) as info:
        await prepare_endpoint(client_for(server), EndpointOptions(response_format="json_schema"))
    assert "\n" not in str(info.value)


async def test_server_that_ignores_response_format_falls_to_a_working_mode(servers):
    # a server that accepts json_schema but does not enforce it: the model's prose comes back
    server = servers(ScriptRule(kind="probe", reply="Sure! Here is some JSON for you.", times=1))
    caps = await probe_endpoint(client_for(server), EndpointOptions())
    assert caps.trials[0].outcome == "unconstrained"
    assert caps.response_format == "json_object"


async def test_missing_embeddings_refuse_or_fall_back_visibly(servers):
    server = servers(embeddings=False)
    caps = await probe_endpoint(client_for(server), EndpointOptions(embedding_model="minilm"))
    assert caps.embeddings == "missing" and "HTTP 501" in caps.embeddings_detail
    (problem,) = problems(caps)
    assert "no embeddings for minilm" in problem
    assert "--embedding-fallback offline" in problem and "MiniLM on llama.cpp" in problem
    fallback = await probe_endpoint(
        client_for(server), EndpointOptions(embedding_model="minilm", embedding_fallback="offline")
    )
    assert problems(fallback) == []
    assert fallback.embedder is not None and "offline fallback" in fallback.embedder
    assert "endpoint:minilm not served" in fallback.embedder


async def test_context_window_from_models_metadata_or_the_flag(servers):
    server = servers(context_window=3072)  # no /props: /v1/models meta.n_ctx
    caps = await probe_endpoint(client_for(server), EndpointOptions())
    assert (caps.server, caps.context_window, caps.context_source) == ("", 3072, "models")
    flagged = await probe_endpoint(client_for(server), EndpointOptions(context_window=1024))
    assert (flagged.context_window, flagged.context_source) == (1024, "flag")
    bare = servers()
    unknown = await probe_endpoint(client_for(bare), EndpointOptions())
    assert (unknown.context_window, unknown.context_source) == (None, "unknown")


async def test_unreachable_endpoint_is_one_line():
    server = ScriptedServer().start()
    url = server.base_url
    server.stop()
    client = ModelClient(base_url=url, api_key="k", model="m", timeout_s=2, max_retries=0)
    with pytest.raises(EndpointUnusable) as info:
        await probe_endpoint(client, EndpointOptions())
    assert "cannot use the endpoint" in str(info.value) and "\n" not in str(info.value)


async def test_record_is_stored_once_and_replay_verifies(servers, tmp_path):
    server = servers(llama_props=True, context_window=2048)
    caps = await probe_endpoint(client_for(server), EndpointOptions())
    path = tmp_path / "r1"
    with Ledger.create(path, RunMeta(name="r1", seed="Why?", config="A")) as led:
        assert led.meta.endpoint is None
        assert record_endpoint(led, caps) is True
        again = await probe_endpoint(client_for(server), EndpointOptions())
        assert again.probed_at != caps.probed_at
        assert record_endpoint(led, again) is False  # same capabilities: not written twice
        assert led.meta.endpoint is not None and led.meta.endpoint.context_window == 2048
    report = verify(path)
    assert report.ok, report
    state = replay(path).state
    assert state.meta is not None and state.meta["endpoint"]["response_format"] == "json_schema"
    with Ledger.open(path) as led:
        assert led.meta.endpoint == caps
    kinds = [line for line in (path / "journal.jsonl").read_text().splitlines()]
    assert sum('"endpoint_probed"' in k for k in kinds) == 1


async def test_embeddings_from_a_second_server(servers):
    chat = servers(embeddings=False)
    embed = servers()
    client = ModelClient(
        base_url=chat.base_url,
        embedding_base_url=embed.base_url,
        api_key="k",
        model="scripted",
        timeout_s=5,
    )
    caps = await prepare_endpoint(client, EndpointOptions(embedding_model="minilm"))
    assert caps.embeddings == "served" and caps.embedding_base_url == embed.base_url
    vectors, _ = await client.embed(["a", "b"], session=1, model="minilm")
    assert len(vectors) == 2
    assert [r.path for r in chat.requests if r.path.endswith("embeddings")] == []
    assert len([r for r in embed.requests if r.path.endswith("embeddings")]) == 2
    await client.aclose()


async def test_probe_picks_the_schema_dialect_the_server_accepts(servers):
    llama = await probe_endpoint(client_for(servers(llama_props=True)), EndpointOptions())
    assert (llama.response_format, llama.schema_dialect) == ("json_schema", "full")
    assert "schema full" in llama.summary()
    hosted = await probe_endpoint(client_for(servers()), EndpointOptions())
    assert (hosted.response_format, hosted.schema_dialect) == ("json_schema", "strict")
    # llama-cpp-python: 500 for json_schema, a grammar from json_object's schema, counts kept
    refusing = servers(llama_props=True, supports_json_schema=False, json_schema_status=500)
    fallback = await probe_endpoint(client_for(refusing), EndpointOptions())
    assert (fallback.response_format, fallback.schema_dialect) == ("json_object", "full")
    prompt = await probe_endpoint(client_for(servers()), EndpointOptions(response_format="prompt"))
    assert (prompt.response_format, prompt.schema_dialect) == ("prompt", "strict")
    assert [t.format for t in prompt.trials] == ["prompt"]  # no schema carried: no trial


async def test_a_server_refusing_a_full_keyword_is_retried_as_strict(tmp_path):
    """Issue 27 item 6: a hosted endpoint that answers the dialect trial with a 400 naming a
    keyword gets the strict dialect, and the record and ``endpoint check`` say why."""
    from curiosity_tui.cli.endpoint_cmds import _lines
    from tests.schema_server import SchemaServer

    with SchemaServer("strict-hosted") as server:
        client = ModelClient(base_url=server.base_url, api_key="k", model="m", timeout_s=30)
        caps = await probe_endpoint(client, EndpointOptions())
        await client.aclose()
    assert [(t.format, t.outcome) for t in caps.trials] == [
        ("json_schema", "honoured"),
        ("json_schema", "refused"),
    ]
    assert caps.schema_dialect == "strict" and server.refusals == {"minItems": 1}
    assert "'minItems' is not permitted" in caps.trials[1].detail
    line = next(x for x in _lines(caps) if x.startswith("schemas"))
    assert line.startswith("schemas    strict dialect: the server refuses the full dialect")
