"""Probe an endpoint before a run's first session: what it can do, and whether the run can work.

What is probed (each a few small requests; ``curiosity-tui endpoint check`` runs it alone):

* response formats: strict ``json_schema`` (a schema whose only valid value the model cannot
  guess, so an honoured reply shows the server enforced it), ``json_object``, and prompt mode
  (the schema in the last user turn, no server support). ``--response-format auto`` takes the
  first that works, in that order; a fixed choice is tried alone;
* the schema dialect (``call_schemas``): where the format carries the schema, one trial with
  the item counts and string lengths only the ``full`` dialect sends; honoured: ``full``;
  refused (a 400 naming a keyword) or ignored: ``strict``, recorded with the reason;
* the context window, where the server says: llama.cpp's ``GET /props``
  (``default_generation_settings.n_ctx``, and ``total_slots``), else ``GET /v1/models``
  metadata (``meta.n_ctx``, ``max_model_len``, ``context_length``), else ``--context-window``;
* ``/v1/embeddings`` for the named embedding model.

The result is an :class:`EndpointCapabilities` record, stored in the run's journal
(``endpoint_probed``) and applied to the client (format, slots, context window). A run that
cannot work raises :class:`EndpointUnusable`: one line naming what is missing and the flag
that works around it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curiosity_tui.clock import utc_now_micro
from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.endpoint_record import (
    EndpointCapabilities,
    FormatChoice,
    FormatTrial,
    ModelFile,
    ResponseFormat,
    TrialOutcome,
)
from curiosity_tui.ledger.events import EndpointProbed, ServerChanged
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.modelio.json_reply import parse_json_object
from curiosity_tui.modelio.sampling import refused_param

__all__ = [
    "EndpointCapabilities",
    "EndpointOptions",
    "EndpointUnusable",
    "prepare_endpoint",
    "probe_endpoint",
    "problems",
    "record_endpoint",
]

_PROBE_VALUES = ("curiosity-probe-7f3a", "curiosity-probe-b2c9")
_PROBE_MAX_TOKENS = 64
_MISSING_EMBEDDINGS = {"http_404", "http_501", "http_400", "http_405"}
_FATAL = {"connection", "timeout", "http_401", "http_403", "http_404"}
EMBEDDINGS_ROUTE = "README: serving embeddings with MiniLM on llama.cpp"


class ProbeReply(BaseModel):
    """The probe's schema: one key whose two allowed values no model guesses unprompted."""

    model_config = ConfigDict(extra="forbid")
    probe: Literal["curiosity-probe-7f3a", "curiosity-probe-b2c9"]


class DialectProbeReply(BaseModel):
    """The dialect trial's schema: item counts and string lengths, which only the ``full``
    dialect sends (issue 27 item 6). A server that enforces them can take ``full``."""

    model_config = ConfigDict(extra="forbid")
    probe: list[Literal["curiosity-probe-7f3a"]] = Field(min_length=2, max_length=2)
    code: str = Field(min_length=4, max_length=4)


_PROBE_MESSAGES = [
    {"role": "user", "content": 'Reply with one JSON object that has exactly one key, "probe".'}
]


class EndpointUnusable(CuriosityError):
    """The endpoint cannot serve this run; the message names what and the flag to use."""


@dataclass
class EndpointOptions:
    response_format: FormatChoice = "auto"
    embedding_model: str | None = None
    embedding_fallback: Literal["none", "offline"] = "none"
    context_window: int | None = None
    model_file: Path | None = None  # its sha256 goes into the record (issue 23.2)


def _root_url(base_url: str | None) -> str | None:
    """``http://host:port`` for ``http://host:port/v1`` (llama.cpp's /props is at the root)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _server_info(client: ModelClient, caps: EndpointCapabilities) -> None:
    root = _root_url(client.base_url)
    props = await client.get_json(f"{root}/props") if root else None
    if isinstance(props, dict) and isinstance(props.get("default_generation_settings"), dict):
        caps.server = "llama.cpp"
        caps.slots = _int(props.get("total_slots"))
        n_ctx = _int(props["default_generation_settings"].get("n_ctx"))
        if n_ctx:
            caps.context_window, caps.context_source = n_ctx, "props"
        caps.sampling_defaults = _sampling_defaults(props["default_generation_settings"])
        caps.server_props = _props_identity(props)
    models = await client.get_json("models")
    data = models.get("data") if isinstance(models, dict) else None
    if isinstance(data, list):
        entries = [d for d in data if isinstance(d, dict)]
        caps.model_listed = any(d.get("id") == client.model for d in entries)
        mine = next((d for d in entries if d.get("id") == client.model), None)
        caps.listed_model = _listed(mine)
        if mine is not None and caps.context_window is None:
            raw_meta = mine.get("meta")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            for value in (
                meta.get("n_ctx"),
                mine.get("max_model_len"),
                mine.get("context_length"),
                mine.get("context_window"),
            ):
                window = _int(value)
                if window:
                    caps.context_window, caps.context_source = window, "models"
                    break


SAMPLING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "typical_p",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "n_predict",
    "stop",
    "samplers",
)
"""The sampling values of llama.cpp's ``default_generation_settings`` the record keeps."""


_MAX_LISTED_BYTES = 4096


def _props_identity(props: dict[str, Any]) -> dict[str, Any]:
    """What llama.cpp's /props says it runs (issue 23.2): the model file's path, the build, a
    hash of the chat template (the template itself is kilobytes; the hash tells two apart),
    the context and the slots."""
    out: dict[str, Any] = {}
    for key in ("model_path", "build_info"):
        if isinstance(props.get(key), str):
            out[key] = props[key][:500]
    template = props.get("chat_template")
    if isinstance(template, str):
        out["chat_template_sha256"] = hashlib.sha256(
            template.encode("utf-8", "replace")
        ).hexdigest()
        out["chat_template_chars"] = len(template)
    settings = props.get("default_generation_settings") or {}
    for key, value in (("n_ctx", settings.get("n_ctx")), ("total_slots", props.get("total_slots"))):
        if _int(value):
            out[key] = value
    return out


def _listed(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    """The model's /v1/models entry as stored: whole when small, else its id and owner only."""
    if entry is None:
        return None
    text = json.dumps(entry, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) <= _MAX_LISTED_BYTES:
        return dict(json.loads(text))
    return {k: entry.get(k) for k in ("id", "owned_by", "created") if k in entry}


def model_file_record(path: Path) -> ModelFile:
    """The sha256 of a model file (``--model-file``), read in 1 MiB blocks; one line if it
    cannot be read."""
    digest = hashlib.sha256()
    size = 0
    try:
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
                size += len(block)
    except OSError as err:
        raise EndpointUnusable(f"--model-file {path}: cannot read: {err.strerror or err}") from None
    return ModelFile(path=str(path), bytes=size, sha256=digest.hexdigest())


def _sampling_defaults(settings: dict[str, Any]) -> dict[str, Any] | None:
    """The sampling defaults llama.cpp reports (at the top of ``default_generation_settings``
    in older builds, under its ``params`` in newer ones); None when it reports none."""
    params = settings.get("params")
    source = params if isinstance(params, dict) else settings
    found = {k: source[k] for k in SAMPLING_KEYS if k in source}
    return found or None


_SAMPLING_TRIAL = {"temperature": 0.0, "top_p": 1.0, "seed": 1}
_SAMPLING_TRIAL_TOKENS = 16


async def _sampling(client: ModelClient, caps: EndpointCapabilities) -> None:
    """Does the server take temperature, top_p and seed? One small request with all three; a
    400/422 naming one records it as refused (the run's calls then leave it out, each saying
    so) and the request goes again without it. Other failures say nothing about sampling."""
    sent = dict(_SAMPLING_TRIAL)
    while sent:
        try:
            await client.probe_chat(
                messages=_PROBE_MESSAGES,
                fmt="prompt",
                schema=ProbeReply,
                max_tokens=_SAMPLING_TRIAL_TOKENS,
                extra=sent,  # kind probe-sampling
            )
        except ModelCallError as err:
            name = refused_param(err.reason, sent) if err.code in ("http_400", "http_422") else None
            if name is None:
                return
            caps.refused_sampling[name] = err.reason[:300]
            del sent[name]
            continue
        return


async def _trial(
    client: ModelClient,
    fmt: ResponseFormat,
    object_schema: bool = False,
    schema: type[BaseModel] = ProbeReply,
) -> FormatTrial:
    # json_schema: the enum forces a ~15-token reply; the others get room for a chatty model
    limit = _PROBE_MAX_TOKENS if fmt == "json_schema" else 2 * _PROBE_MAX_TOKENS
    try:
        text, seconds, finish = await client.probe_chat(
            messages=_PROBE_MESSAGES,
            fmt=fmt,
            schema=schema,
            max_tokens=limit,
            object_schema=object_schema,
        )
    except ModelCallError as err:
        if err.code in _FATAL:
            raise EndpointUnusable(
                f"cannot use the endpoint {client.base_url or 'OpenAI'} with model "
                f"{client.model}: {err.reason}"
            ) from None
        outcome: TrialOutcome = "overflow" if err.code == "context_overflow" else "refused"
        if not err.code.startswith("http_") and err.code != "context_overflow":
            outcome = "error"
        return FormatTrial(format=fmt, outcome=outcome, detail=err.reason[:300])
    seconds = round(seconds, 3)
    cut = f" (cut at {limit} tokens)" if finish == "length" else ""
    try:
        data = parse_json_object(text)
    except ValueError as exc:
        return FormatTrial(
            format=fmt, outcome="unconstrained", detail=f"{exc}{cut}"[:300], latency_s=seconds
        )
    if fmt == "json_schema" or object_schema:
        try:
            schema.model_validate(data)
        except ValidationError:
            return FormatTrial(
                format=fmt,
                outcome="unconstrained",
                detail="HTTP 200, but the reply ignores the schema: " + text[:120],
                latency_s=seconds,
            )
    return FormatTrial(format=fmt, outcome="honoured", latency_s=seconds)


async def _object_schema(client: ModelClient, caps: EndpointCapabilities) -> bool:
    """Does the server enforce a schema sent with json_object as ``response_format.schema``
    (llama.cpp, llama-cpp-python)? Only a reply that holds one of the probe's enum values says
    so (no model guesses them), so a server that ignores the key is never credited with it."""
    trial = await _trial(client, "json_object", object_schema=True)
    enforced = trial.outcome == "honoured"
    trial.detail = ("schema enforced" if enforced else "schema not enforced") + (
        f": {trial.detail}" if trial.detail else ""
    )
    caps.trials.append(trial)
    if enforced:
        caps.response_format, caps.json_object_schema = "json_object", True
    return enforced


async def _formats(client: ModelClient, caps: EndpointCapabilities, choice: FormatChoice) -> None:
    """The response format structured calls use: the first of json_schema, json_object with
    the schema enforced, json_object, prompt that works (or the one ``choice`` names)."""
    if choice == "json_object" and await _object_schema(client, caps):
        return
    if choice != "auto":
        trial = await _trial(client, choice)
        caps.trials.append(trial)
        if trial.outcome in ("honoured", "unconstrained"):
            caps.response_format = choice
        return
    for fmt in ("json_schema", "json_object"):
        if fmt == "json_object" and await _object_schema(client, caps):
            return
        trial = await _trial(client, fmt)
        caps.trials.append(trial)
        if trial.outcome == "honoured":
            caps.response_format = fmt
            return
    trial = await _trial(client, "prompt")
    caps.trials.append(trial)
    if trial.outcome in ("honoured", "unconstrained"):
        caps.response_format = "prompt"


async def _embeddings(client: ModelClient, caps: EndpointCapabilities, model: str) -> None:
    kept = len(client.calls)
    try:
        vectors, _ = await client.embed(["probe"], session=0, kind="probe", model=model)
    except ModelCallError as err:
        caps.embeddings = "missing" if err.code in _MISSING_EMBEDDINGS else "error"
        bare = err.records[-1].error if err.records else None  # without the call's prefix
        caps.embeddings_detail = (bare or err.reason)[:300]
        return
    finally:
        del client.calls[kept:]  # the probe is recorded in the capabilities, not as a call
    if vectors and vectors[0]:
        caps.embeddings, caps.embeddings_detail = "served", f"dimension {len(vectors[0])}"
    else:
        caps.embeddings, caps.embeddings_detail = "error", "the server returned empty vectors"


async def _dialect(
    client: ModelClient, caps: EndpointCapabilities
) -> Literal["strict", "full"] | None:
    """The schema dialect the server can take, tried in order (issue 27 item 6): ``full``
    where the format carries the schema and the server enforces the full dialect's counts and
    lengths (the dialect trial is honoured); ``strict`` where it refuses them (a 400 naming a
    keyword), ignores them, or the format carries no schema. The trial is recorded (its
    detail says which dialect and why); None if no format works."""
    fmt = caps.response_format
    if fmt is None:
        return None
    carried = fmt == "json_schema" or caps.json_object_schema
    if not carried:
        return "strict"
    trial = await _trial(
        client, fmt, object_schema=caps.json_object_schema, schema=DialectProbeReply
    )
    dialect: Literal["strict", "full"] = "full" if trial.outcome == "honoured" else "strict"
    why = {
        "honoured": "the server enforces item counts and string lengths",
        "refused": "the server refuses the full dialect's keywords, retried as strict",
        "unconstrained": "the server ignores item counts and string lengths",
    }.get(trial.outcome, "the dialect trial failed")
    trial.detail = f"dialect {dialect}: {why}" + (f" ({trial.detail})" if trial.detail else "")
    caps.trials.append(trial)
    return dialect


async def probe_endpoint(client: ModelClient, opts: EndpointOptions) -> EndpointCapabilities:
    """Probe ``client``'s endpoint (raises :class:`EndpointUnusable` if it cannot be reached)."""
    from curiosity_tui.modelio.embedders import offline_fallback_name

    caps = EndpointCapabilities(
        base_url=client.base_url,
        model=client.model,
        probed_at=utc_now_micro(),
        requested_format=opts.response_format,
        embedding_model=opts.embedding_model,
        embedding_base_url=client.embedding_base_url,
        embedding_fallback=opts.embedding_fallback,
    )
    saved = client.response_format
    if opts.model_file is not None:
        caps.model_file = model_file_record(opts.model_file)
    await _server_info(client, caps)
    if opts.context_window:
        caps.context_window, caps.context_source = opts.context_window, "flag"
    try:
        await _formats(client, caps, opts.response_format)
        caps.schema_dialect = await _dialect(client, caps)
    finally:
        client.response_format = saved
    if caps.response_format is not None:
        await _sampling(client, caps)
    if opts.embedding_model:
        await _embeddings(client, caps, opts.embedding_model)
        if caps.embeddings == "served":
            caps.embedder = f"endpoint:{opts.embedding_model}"
        elif opts.embedding_fallback == "offline":
            caps.embedder = offline_fallback_name(opts.embedding_model)
    return caps


def problems(caps: EndpointCapabilities) -> list[str]:
    """What keeps a run from working on this endpoint, each naming the flag that helps."""
    out: list[str] = []
    if caps.response_format is None:
        tried = "; ".join(f"{t.format}: {t.outcome} ({t.detail})" for t in caps.trials)
        if caps.requested_format == "auto":
            out.append(f"no response format works on this server ({tried})")
        else:
            out.append(
                f"the server does not serve --response-format {caps.requested_format} "
                f"({tried}); pass --response-format auto to negotiate, or json_object / prompt"
            )
    if caps.embedding_model and caps.embeddings != "served" and caps.embedder is None:
        out.append(
            f"the server has no embeddings for {caps.embedding_model} "
            f"({caps.embeddings_detail}); point --embedding-base-url at a server that has "
            f"them ({EMBEDDINGS_ROUTE}), drop --embedding-model, or pass "
            "--embedding-fallback offline"
        )
    return out


def apply_capabilities(client: ModelClient, caps: EndpointCapabilities) -> None:
    """Make ``client`` use what the probe found: the format, the slots, the context window."""
    if caps.response_format is not None:
        client.response_format = caps.response_format
        client.json_schema_supported = caps.response_format == "json_schema"
        client.json_object_schema = caps.json_object_schema
    client.server_slots = caps.slots
    client.context_window = caps.context_window
    client.refused_sampling.update(caps.refused_sampling)


async def prepare_endpoint(client: ModelClient, opts: EndpointOptions) -> EndpointCapabilities:
    """Probe, refuse an endpoint the run cannot use (one line), and configure the client."""
    caps = await probe_endpoint(client, opts)
    found = problems(caps)
    if found:
        raise EndpointUnusable("endpoint check failed: " + "; ".join(found))
    apply_capabilities(client, caps)
    return caps


def record_endpoint(led: Ledger, caps: EndpointCapabilities) -> bool:
    """Store ``caps`` in the run's journal unless the latest record says the same; True if
    written. A batch of its own (``batch_committed``), before the next session."""
    if caps.same_as(led.meta.endpoint):
        return False
    changes = caps.changes_from(led.meta.endpoint) if led.last_session > 0 else {}
    with led.batch(led.last_session, marker="batch_committed", label="endpoint") as b:
        b.emit(EndpointProbed.model_validate(caps.model_dump(mode="json")))
        if changes:  # the server is not what the run's earlier sessions ran on (issue 23.2)
            b.emit(ServerChanged(after_session=led.last_session, changes=changes))
    return True
