"""A chat request built from a template of the last one of its shape (issue 14.5).

``openai``'s ``_build_request`` turns a request's options into an ``httpx`` request: it merges
the client's auth and default headers with the call's own, parses and re-joins the URL twice,
and ``httpx`` then normalises the header list three more times. For the calls a pilot makes
thousands of (a JSON body posted to one path, with the ``X-Curiosity-*`` headers) all of that
depends only on the *names* of the call's headers and on the client, not on their values or
the body; it was about a quarter of a call's CPU.

:func:`attach` gives an ``openai.AsyncOpenAI`` a builder (:class:`RequestBuilder`) that, for
a call of that shape, keeps the request ``openai`` built the first time (its URL, method,
timeout and raw header list) and builds the next ones by putting the call's header values
and ``Content-Length`` in their places, with ``openai``'s own JSON encoder for the body. The
inputs ``openai`` would read are read again on every call, with ``openai``'s own methods
(auth and default headers, query parameters, base URL, the ``httpx`` client's headers,
cookies and parameters), and the template is used only when they are what they were. Any
other request (another method, files, a query, a header whose value changes other headers,
non-ASCII header text, debug logging on) goes through ``openai``'s builder. Before it is
attached, a sample request is built both ways and compared; if they differ (another
``openai`` or ``httpx`` layout), nothing is attached.

:func:`post_json` is ``oa.post`` for a JSON body with its ``FinalRequestOptions`` made without
pydantic's per-call deep copies of their defaults (:class:`OptionsTemplate`), while ``post`` is
``openai``'s own. Decision 270 has the figures.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

__all__ = ["OptionsTemplate", "RequestBuilder", "attach", "post_json"]

#: header names whose value changes more than its own line (multipart detection, the body
#: framing httpx adds, the host it adds)
_RESERVED = frozenset({"content-type", "content-length", "transfer-encoding", "host"})
_MAX_TEMPLATES = 256


class _Template(NamedTuple):
    base: list[tuple[str, Any]]  # openai's auth + default headers, merged
    base_url: Any  # the client's base URL (compared by identity)
    http: Any  # the httpx client
    client_raw: list[tuple[bytes, bytes]]  # its headers
    method: str
    url: Any  # the request's URL (httpx URLs are immutable)
    raw: list[tuple[bytes, bytes]]  # the request's header lines
    slots: tuple[int, ...]  # where each of the call's headers is, in the call's order
    length_slot: int  # where Content-Length is
    timeout: dict[str, Any]  # the request's timeout extension


class _Shape(NamedTuple):
    key: tuple[Any, ...]
    base: list[tuple[str, Any]]


class RequestBuilder:
    """``oa._build_request`` for ``oa``: templates for the one common shape, ``openai``'s
    builder (``original``) for everything else and to learn a template from."""

    def __init__(self, oa: Any, original: Any, merge_headers: Any, httpx: Any, dumps: Any) -> None:
        self._oa = oa
        self._original = original
        self._merge_headers = merge_headers
        self._httpx = httpx
        self._dumps = dumps
        self._log = logging.getLogger("openai._base_client")
        self._templates: dict[tuple[Any, ...], _Template] = {}

    def __call__(self, options: Any, *, retries_taken: int = 0) -> Any:
        shape = self._shape(options, retries_taken)
        if shape is None:
            return self._original(options, retries_taken=retries_taken)
        template = self._templates.get(shape.key)
        if template is not None and self._current(template, shape.base):
            return self.build(template, options)
        request = self._original(options, retries_taken=retries_taken)
        template = self.learn(request, options, shape.base)
        if template is not None:
            if len(self._templates) >= _MAX_TEMPLATES:
                self._templates.clear()
            self._templates[shape.key] = template
        return request

    def _shape(self, options: Any, retries_taken: int) -> _Shape | None:
        """The template key of a request of the common shape; None for any other request."""
        oa = self._oa
        if self._log.isEnabledFor(logging.DEBUG) or oa._idempotency_header:
            return None
        if options.method != "post" or type(options.url) is not str:
            return None
        if options.content is not None or options.files is not None:
            return None
        if options.extra_json is not None or type(options.json_data) is not dict:
            return None
        headers, timeout = options.headers, options.timeout
        if type(headers) is not dict or type(timeout) not in (float, int):
            return None
        if not _plain_headers(headers):
            return None
        if options.params or oa.default_query or oa._auth_query(options.security):
            return None
        base = self._merge_headers(oa._auth_headers(options.security), oa.default_headers)
        oa._validate_headers({**base, **headers}, headers)  # raises as openai's would
        key = (options.url, tuple(headers), retries_taken, type(timeout), timeout)
        return _Shape(key, list(base.items()))

    def _current(self, template: _Template, base: list[tuple[str, Any]]) -> bool:
        """Whether the client is as it was when ``template`` was learned."""
        oa, http = self._oa, template.http
        return (
            base == template.base
            and oa.base_url is template.base_url
            and oa._client is http
            and http.headers.raw == template.client_raw
            and not http.params
            and len(http.cookies.jar) == 0
        )

    def build(self, template: _Template, options: Any) -> Any:
        """The request ``openai`` would build for ``options`` (of ``template``'s shape)."""
        content: bytes = self._dumps(options.json_data)
        raw = list(template.raw)
        for slot, value in zip(template.slots, options.headers.values(), strict=True):
            raw[slot] = (raw[slot][0], value.encode("ascii"))
        slot = template.length_slot
        raw[slot] = (raw[slot][0], str(len(content)).encode("ascii"))
        httpx = self._httpx
        request = httpx.Request(
            template.method,
            template.url,
            headers=httpx.Headers(raw),
            stream=httpx.ByteStream(content),
            extensions={"timeout": dict(template.timeout)},
        )
        request.read()
        return request

    def learn(self, request: Any, options: Any, base: list[tuple[str, Any]]) -> _Template | None:
        """The template of ``request`` (built by ``openai`` from ``options``), or None when
        rebuilding it from the template would not give it back exactly."""
        http = self._oa._client
        if len(http.cookies.jar) or http.params or set(request.extensions) != {"timeout"}:
            return None
        raw = request.headers.raw
        slots = tuple(_slot(raw, name) for name in options.headers)
        length_slot = _slot(raw, "content-length")
        if -1 in slots or length_slot < 0:
            return None
        template = _Template(
            base=base,
            base_url=self._oa.base_url,
            http=http,
            client_raw=http.headers.raw,
            method=request.method,
            url=request.url,
            raw=raw,
            slots=slots,
            length_slot=length_slot,
            timeout=dict(request.extensions["timeout"]),
        )
        return template if same_request(self.build(template, options), request) else None


def _plain_headers(headers: dict[Any, Any]) -> bool:
    """A call's headers whose values reach the wire as they are and change nothing else."""
    lowered = set()
    for name, value in headers.items():
        if type(name) is not str or type(value) is not str:
            return False
        if not (name.isascii() and value.isascii()):
            return False
        lowered.add(name.lower())
    return len(lowered) == len(headers) and lowered.isdisjoint(_RESERVED)


def _slot(raw: list[tuple[bytes, bytes]], name: str) -> int:
    """The index of the one header line called ``name`` in ``raw``; -1 if not exactly one."""
    wanted = name.lower().encode("ascii")
    found = [i for i, (key, _) in enumerate(raw) if key.lower() == wanted]
    return found[0] if len(found) == 1 else -1


def same_request(a: Any, b: Any) -> bool:
    """Whether two ``httpx`` requests are the same request, attribute for attribute."""
    if set(vars(a)) != set(vars(b)) or type(a.stream) is not type(b.stream):
        return False
    return (
        a.method == b.method
        and str(a.url) == str(b.url)
        and a.url == b.url
        and a.headers.raw == b.headers.raw
        and a.headers.encoding == b.headers.encoding
        and a.extensions == b.extensions
        and a.content == b.content
        and b"".join(a.stream) == b"".join(b.stream)
    )


def attach(oa: Any) -> bool:
    """Give ``oa`` (an ``openai.AsyncOpenAI``) the template builder. False, and nothing
    changed, when the client is not built the way this expects."""
    try:
        import httpx2 as httpx
        from openai._base_client import _merge_headers
        from openai._models import FinalRequestOptions
        from openai._utils._json import openapi_dumps
    except ImportError:
        return False
    original = getattr(oa, "_build_request", None)
    if original is None or isinstance(original, RequestBuilder):
        return False
    if not isinstance(getattr(oa, "_client", None), httpx.AsyncClient):
        return False
    builder = RequestBuilder(oa, original, _merge_headers, httpx, openapi_dumps)
    try:
        ok = _self_check(builder, FinalRequestOptions)
    except Exception:  # another layout: any failure means "do not attach"
        ok = False
    if ok:
        oa._build_request = builder
    return ok


def _self_check(builder: RequestBuilder, options_type: Any) -> bool:
    """Build two sample requests both ways (the second from the first one's template)."""

    def sample(call: str, body: str) -> Any:
        return options_type.construct(
            method="post",
            url="/chat/completions",
            json_data={"model": "m", "messages": [{"role": "user", "content": body}]},
            content=None,
            files=None,
            headers={"X-Curiosity-Call": call, "X-Curiosity-Session": "1"},
            timeout=5.0,
        )

    first, second = sample("check", "a"), sample("self-check", "a longer body")
    shape = builder._shape(first, 0)
    if shape is None:
        return False
    template = builder.learn(builder._original(first, retries_taken=0), first, shape.base)
    if template is None or builder._shape(second, 0) != (shape.key, shape.base):
        return False
    return same_request(builder.build(template, second), builder._original(second, retries_taken=0))


class OptionsTemplate:
    """``FinalRequestOptions`` of a JSON ``post`` as ``oa.post`` constructs them, without the
    per-call deep copies of pydantic's defaults: what ``FinalRequestOptions.construct`` does
    (top-level copies of the mappings it is given, then pydantic's ``model_construct``) with
    every field given, the defaults learned from one construction (immutable values, and
    dicts of them, copied for each call), and the fields set it records. A sample is built
    both ways first; if they differ, the template is not made (``TypeError``)."""

    def __init__(self, options_type: Any, not_given: Any, model_construct: Any) -> None:
        given: dict[str, Any] = {
            "method": "post",
            "url": "/",
            "json_data": {},
            "content": None,
            "files": None,
            "headers": {},
            "timeout": 1.0,
        }
        sample = options_type.construct(**given)
        self._type = options_type
        self._not_given = not_given
        self._model_construct = model_construct
        self._fields_set = frozenset(sample.model_fields_set)
        if self._fields_set != set(given):
            raise TypeError("FinalRequestOptions sets other fields than it was given")
        self._defaults = {k: v for k, v in vars(sample).items() if k not in self._fields_set}
        for value in self._defaults.values():
            plain = type(value) is dict and all(_scalar(v, None) for v in value.values())
            if not (plain or _scalar(value, not_given)):
                raise TypeError(f"a default of FinalRequestOptions is {type(value).__name__}")
        body, headers = {"model": "m", "n": [1]}, {"X-A": "1"}
        built = self.options("/p", body, headers, 2.0)
        want = options_type.construct(
            method="post",
            url="/p",
            json_data=body,
            content=None,
            files=None,
            headers=headers,
            timeout=2.0,
        )
        if options_state(built, not_given) != options_state(want, not_given):
            raise TypeError("FinalRequestOptions.construct is not what this expects")

    def options(
        self, path: str, body: dict[str, Any], headers: dict[str, str], timeout: Any
    ) -> Any:
        """What ``oa.post(path, cast_to=…, body=body, options={"headers": headers,
        "timeout": timeout})`` passes to ``oa.request``; None when a value of ``body`` or
        ``headers`` is ``NotGiven`` (``construct`` drops it: the caller takes ``oa.post``)."""
        not_given = self._not_given
        if any(isinstance(v, not_given) for v in body.values()) or any(
            isinstance(v, not_given) for v in headers.values()
        ):
            return None
        values = {k: dict(v) if type(v) is dict else v for k, v in self._defaults.items()}
        values.update(method="post", url=path, json_data=dict(body), content=None, files=None)
        values.update(headers=dict(headers), timeout=timeout)
        return self._model_construct(self._type, set(self._fields_set), **values)


def options_state(options: Any, not_given: Any) -> tuple[Any, ...]:
    """What a ``FinalRequestOptions`` is made of (``NotGiven`` values by type)."""
    values = {k: ("NotGiven",) if isinstance(v, not_given) else v for k, v in vars(options).items()}
    return (
        type(options),
        list(values.items()),
        options.model_fields_set,
        options.__pydantic_extra__,
        options.__pydantic_private__,
    )


def _scalar(value: Any, not_given: type | None) -> bool:
    """An immutable default (``NotGiven`` is stateless: openai only tests its type)."""
    return value is None or type(value) in (str, int, float, bool) or type(value) is not_given


_OPTIONS: list[OptionsTemplate | None] = []


def _options_template() -> OptionsTemplate | None:
    if not _OPTIONS:
        try:
            from openai._models import FinalRequestOptions
            from openai._types import NotGiven
            from pydantic import BaseModel

            construct = BaseModel.model_construct.__func__  # type: ignore[attr-defined]
            _OPTIONS.append(OptionsTemplate(FinalRequestOptions, NotGiven, construct))
        except (ImportError, TypeError, AttributeError):
            _OPTIONS.append(None)
    return _OPTIONS[0]


def post_json(
    oa: Any, path: str, body: dict[str, Any], headers: dict[str, str], timeout: Any
) -> Any:
    """``oa.post(path, cast_to=object, body=body, options={"headers": headers, "timeout":
    timeout})``: the parsed JSON reply, openai's errors. With the options built from the
    template when ``oa.post`` is openai's own (it only constructs them and calls
    ``oa.request``)."""
    template = _options_template()
    options = None
    if template is not None and _plain_post(oa):
        options = template.options(path, body, headers, timeout)
    if options is None:
        return oa.post(
            path, cast_to=object, body=body, options={"headers": headers, "timeout": timeout}
        )
    return oa.request(object, options, stream=False, stream_cls=None)


def _plain_post(oa: Any) -> bool:
    """Whether ``oa.post`` is openai's own (it constructs the options and calls ``request``)."""
    import openai._base_client as base  # imported with openai: a dict lookup

    return getattr(type(oa), "post", None) is base.AsyncAPIClient.post
