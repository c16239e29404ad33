"""modelio/request_template.py: a request built from its shape's template is the request
openai's own ``_build_request`` builds, on varied headers, bodies, timeouts, retry counts and
client states; anything else takes openai's builder; the options equal ``oa.post``'s."""

from __future__ import annotations

import logging
from typing import Any

import httpx2
import openai
import pytest
from openai._models import FinalRequestOptions
from openai._types import NotGiven, Omit

from curiosity_tui.modelio import request_template as rt
from curiosity_tui.modelio.client import schema_response_format
from curiosity_tui.protocol.schemas import JudgeAfterResponse

MESSAGES = [
    {"role": "system", "content": "You judge. Ünïcode — “quotes” \u2028 and \\ backslash."},
    {"role": "user", "content": "Q? F1: a\nF2: b"},
]
BODIES: list[dict[str, Any]] = [
    {"model": "scripted", "messages": MESSAGES, "max_tokens": 100},
    {"model": "scripted", "messages": MESSAGES, "max_completion_tokens": 7},
    {
        "model": "m",
        "messages": MESSAGES[1:],
        "response_format": schema_response_format(JudgeAfterResponse),
        "max_tokens": 200,
    },
    {"model": "m", "messages": [], "response_format": {"type": "json_object"}, "max_tokens": 1},
    {"model": "m", "messages": [{"role": "user", "content": "x" * 5000}], "temperature": 0.5},
]
HEADER_SETS: list[dict[str, Any]] = [
    {"X-Curiosity-Call": "judge-after", "X-Curiosity-Session": "3"},
    {"X-Curiosity-Call": "answer", "X-Curiosity-Session": "12", "X-Curiosity-Run": "C+cur-r0"},
    {},
    {"x-curiosity-call": "lower-case name"},
    {"User-Agent": "mine/1.0", "X-Curiosity-Session": "1"},  # replaces a default header
    {"Connection": "close"},  # replaces an httpx client header
    {"Authorization": "Bearer other-key"},
    {"X-Stainless-Retry-Count": "9", "X-Stainless-Read-Timeout": "1"},
    {"X-Empty": ""},
    # not of the template's shape: openai's builder, and its outcome
    {"Content-Type": "multipart/form-data"},
    {"X-Curiosity-Run": "rün"},  # not ASCII: openai raises
    {"X-Curiosity-Call": b"bytes"},
    {"X-Curiosity-Call": "a", "x-curiosity-call": "b"},
    {"OpenAI-Organization": Omit()},
    {"X-Curiosity-Call": NotGiven()},
]
VALUES = ["first", "second-and-longer", "3", " padded ", "a,b;c=d", "x\r\nInjected: 1"]
TIMEOUTS: list[Any] = [5.0, 600, 0.25, None, NotGiven(), httpx2.Timeout(3.0, connect=1.0)]


def _options(body: dict[str, Any], headers: dict[str, Any], timeout: Any, **kw: Any) -> Any:
    values: dict[str, Any] = dict(
        method="post", url="/chat/completions", json_data=body, content=None, files=None
    )
    values.update(headers=headers, timeout=timeout, **kw)
    return FinalRequestOptions.construct(**values)


def _snapshot(request: httpx2.Request) -> tuple[Any, ...]:
    """Everything a sent request is made of, compared without the module's own helper."""
    return (
        sorted(vars(request)),
        request.method,
        str(request.url),
        (request.url.scheme, request.url.netloc, request.url.raw_path),
        request.headers.raw,
        request.headers.encoding,
        request.extensions,
        request.content,
        type(request.stream),
        b"".join(request.stream),  # type: ignore[arg-type]
    )


def _outcome(build: Any, options: Any, retries: int = 0) -> Any:
    try:
        return ("ok", _snapshot(build(options, retries_taken=retries)))
    except Exception as exc:
        return ("raised", type(exc), str(exc))


class _Counting:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def __call__(self, options: Any, *, retries_taken: int = 0) -> Any:
        self.calls += 1
        return self.inner(options, retries_taken=retries_taken)


def _client(**kw: Any) -> tuple[openai.AsyncOpenAI, Any, _Counting]:
    """A client with the builder, openai's builder (the definition), and a count of the
    times the builder fell back to it."""
    oa = openai.AsyncOpenAI(
        api_key="sk-test", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=600.0, **kw
    )
    definition = oa._build_request
    assert rt.attach(oa)
    builder = oa._build_request
    assert isinstance(builder, rt.RequestBuilder)
    counting = _Counting(builder._original)
    builder._original = counting
    return oa, definition, counting


async def test_attaches_once_to_the_installed_openai() -> None:
    oa, _, _ = _client()
    assert not rt.attach(oa)  # already attached
    await oa.close()


@pytest.mark.parametrize("headers", HEADER_SETS, ids=[str(i) for i in range(len(HEADER_SETS))])
async def test_requests_equal_openais_for_every_header_set(headers: dict[str, Any]) -> None:
    oa, definition, counting = _client()
    builder = oa._build_request
    for i, body in enumerate(BODIES):
        for value in VALUES:
            varied = {k: (value if type(v) is str and v else v) for k, v in headers.items()}
            for timeout in TIMEOUTS[:3]:
                for retries in (0, 1):
                    options = _options(body, varied, timeout)
                    want = _outcome(definition, options, retries)
                    assert _outcome(builder, options, retries) == want, (i, value, timeout)
    await oa.close()


async def test_the_common_shape_is_built_from_the_template() -> None:
    oa, definition, counting = _client()
    builder = oa._build_request
    for session in range(1, 40):
        headers = {"X-Curiosity-Call": f"kind-{session % 7}", "X-Curiosity-Session": str(session)}
        options = _options(BODIES[session % len(BODIES)], headers, 600.0)
        assert _outcome(builder, options) == _outcome(definition, options)
    assert counting.calls == 1  # learned once, then every request from the template
    await oa.close()


@pytest.mark.parametrize("timeout", TIMEOUTS, ids=[repr(t) for t in TIMEOUTS])
async def test_timeouts_of_every_kind(timeout: Any) -> None:
    oa, definition, counting = _client()
    for value in VALUES:
        options = _options(BODIES[0], {"X-Curiosity-Call": value}, timeout)
        assert _outcome(oa._build_request, options) == _outcome(definition, options)
    # float and int timeouts of the same value are different requests (the header's text)
    if type(timeout) in (float, int):
        assert counting.calls == 1
    else:
        assert counting.calls == len(VALUES)
    await oa.close()


OTHER_OPTIONS: list[dict[str, Any]] = [
    {"method": "get", "json_data": None},
    {"url": "http://127.0.0.1:9/elsewhere/chat"},
    {"url": "/embeddings"},
    {"params": {"api-version": "1"}},
    {"extra_json": {"seed": 1}},
    {"content": b"raw bytes"},
    {"json_data": [1, 2]},
    {"idempotency_key": "k-1"},
    {"max_retries": 2},
    {"follow_redirects": True},
]


@pytest.mark.parametrize("extra", OTHER_OPTIONS, ids=[str(sorted(o)) for o in OTHER_OPTIONS])
async def test_other_requests_equal_openais(extra: dict[str, Any]) -> None:
    oa, definition, _ = _client()
    for value in VALUES[:3]:
        values = {"headers": {"X-Curiosity-Call": value}, "timeout": 5.0, **extra}
        values.setdefault("json_data", BODIES[0])
        values.setdefault("method", "post")
        values.setdefault("url", "/chat/completions")
        options = FinalRequestOptions.construct(**values)
        assert _outcome(oa._build_request, options) == _outcome(definition, options)
    await oa.close()


def _set_cookie(oa: openai.AsyncOpenAI) -> None:
    oa._client.cookies.set("session", "abc", domain="127.0.0.1")


def _add_client_header(oa: openai.AsyncOpenAI) -> None:
    oa._client.headers["X-Added"] = "1"


def _set_client_params(oa: openai.AsyncOpenAI) -> None:
    oa._client.params = {"q": "1"}


CHANGES: dict[str, Any] = {
    "api_key": lambda oa: setattr(oa, "api_key", "sk-other"),
    "no_api_key": lambda oa: setattr(oa, "api_key", ""),
    "organization": lambda oa: setattr(oa, "organization", "org-1"),
    "project": lambda oa: setattr(oa, "project", "proj-1"),
    "base_url": lambda oa: setattr(oa, "base_url", "http://127.0.0.1:10/v2"),
    "same_base_url_again": lambda oa: setattr(oa, "base_url", "http://127.0.0.1:9/v1"),
    "platform": lambda oa: setattr(oa, "_platform", None if oa._platform else "Linux"),
    "custom_headers": lambda oa: oa._custom_headers.update({"X-Default": "d"}),
    "custom_query": lambda oa: oa._custom_query.update({"q": "1"}),
    "cookie": _set_cookie,
    "client_header": _add_client_header,
    "client_params": _set_client_params,
    "idempotency_header": lambda oa: setattr(oa, "_idempotency_header", "Idempotency-Key"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_a_changed_client_is_followed(change: str) -> None:
    oa, definition, _ = _client()
    headers = {"X-Curiosity-Call": "a", "X-Curiosity-Session": "1"}
    first = _options(BODIES[0], headers, 5.0)
    assert _outcome(oa._build_request, first) == _outcome(definition, first)
    CHANGES[change](oa)
    for value in VALUES:
        options = _options(BODIES[2], {**headers, "X-Curiosity-Call": value}, 5.0)
        assert _outcome(oa._build_request, options) == _outcome(definition, options)
    await oa.close()


async def test_debug_logging_takes_openais_builder(caplog: pytest.LogCaptureFixture) -> None:
    oa, _, counting = _client()
    headers = {"X-Curiosity-Call": "a"}
    oa._build_request(_options(BODIES[0], headers, 5.0))
    with caplog.at_level(logging.DEBUG, logger="openai._base_client"):
        oa._build_request(_options(BODIES[0], headers, 5.0))
    assert counting.calls == 2
    assert any("Building HTTP request" in r.getMessage() for r in caplog.records)
    await oa.close()


async def test_a_client_of_another_layout_is_left_alone() -> None:
    oa = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=0)
    oa._client = object()  # type: ignore[assignment]
    before = oa._build_request
    assert not rt.attach(oa)
    assert oa._build_request == before

    class Odd:
        def _build_request(self, options: Any, *, retries_taken: int = 0) -> Any:
            return "odd"

    odd: Any = Odd()
    assert not rt.attach(odd)
    assert odd._build_request(None) == "odd"


# ------------------------------------------------------------------------------------ options


def _option_state(options: Any) -> tuple[Any, ...]:
    def plain(value: Any) -> Any:
        return ("NotGiven",) if isinstance(value, NotGiven) else value

    return (
        type(options),
        [(k, plain(v)) for k, v in vars(options).items()],
        options.model_fields_set,
        options.__pydantic_extra__,
        options.__pydantic_private__,
    )


@pytest.mark.parametrize("body", BODIES, ids=[str(i) for i in range(len(BODIES))])
@pytest.mark.parametrize("timeout", [5.0, 600, None, NotGiven()], ids=repr)
def test_options_equal_the_ones_post_constructs(body: dict[str, Any], timeout: Any) -> None:
    template = rt._options_template()
    assert template is not None
    for headers in HEADER_SETS[:9]:
        got = template.options("/chat/completions", dict(body), dict(headers), timeout)
        want = FinalRequestOptions.construct(
            method="post",
            url="/chat/completions",
            json_data=dict(body),
            content=None,
            files=None,
            **{"headers": dict(headers), "timeout": timeout},
        )
        assert _option_state(got) == _option_state(want)


def test_each_options_object_has_its_own_mutable_values() -> None:
    template = rt._options_template()
    assert template is not None
    a = template.options("/p", {"model": "m"}, {"X": "1"}, 5.0)
    b = template.options("/p", {"model": "m"}, {"X": "1"}, 5.0)
    for name, value in vars(a).items():
        if isinstance(value, dict | list):
            assert value is not vars(b)[name], name


def test_a_not_given_value_takes_post() -> None:
    template = rt._options_template()
    assert template is not None
    assert template.options("/p", {"model": NotGiven()}, {}, 5.0) is None
    assert template.options("/p", {"model": "m"}, {"X": NotGiven()}, 5.0) is None


async def test_post_json_takes_post_when_post_is_not_openais() -> None:
    seen: list[Any] = []

    class Posting(openai.AsyncOpenAI):
        async def post(self, path: str, **kw: Any) -> Any:  # type: ignore[override]
            seen.append((path, kw))
            return {"ok": True}

    oa = Posting(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=0)
    got = await rt.post_json(oa, "/chat/completions", {"model": "m"}, {"X": "1"}, 5.0)
    assert got == {"ok": True}
    assert seen == [
        (
            "/chat/completions",
            {
                "cast_to": object,
                "body": {"model": "m"},
                "options": {"headers": {"X": "1"}, "timeout": 5.0},
            },
        )
    ]
    await oa.close()


async def test_a_models_calls_take_both_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    from curiosity_tui.modelio.client import ModelClient
    from curiosity_tui.offline.demo import DemoResponder
    from curiosity_tui.offline.scripted_server import ScriptedServer

    with ScriptedServer(responder=DemoResponder()) as srv:
        client = ModelClient(base_url=srv.base_url, api_key="sk-test", model="scripted")
        try:
            await client.complete(
                kind="answer", session=1, messages=MESSAGES, max_tokens=50, internal=True
            )
            oa = client._client()
            assert isinstance(oa._build_request, rt.RequestBuilder)
            counting = _Counting(oa._build_request._original)
            oa._build_request._original = counting

            def no_construct(*a: Any, **kw: Any) -> Any:
                raise AssertionError("oa.post's construct was called")

            monkeypatch.setattr(FinalRequestOptions, "construct", no_construct)
            for session in range(2, 6):
                text, record = await client.complete(
                    kind="answer", session=session, messages=MESSAGES, max_tokens=50, internal=True
                )
                assert text and record.error is None
        finally:
            await client.aclose()
    assert counting.calls == 0  # every request from the template learned by the first
    assert len(srv.requests) == 5
