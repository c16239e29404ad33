"""A model rates a pack through the same scheme as a human (issue 16 item 3; decision 235).

The model sees exactly what a human rater sees: the scheme's instructions, its questions and
categories, and one item's three sections. It never sees another rater's file or the key:
this module opens the pack through :class:`RatingSession`, which reads the manifest, the
items and the rater's own ratings file only. Each item is one structured ``rate`` call
(``X-Curiosity-Call: rate``) whose reply is category + grounds + quotes per question, checked
by the human validators (:func:`validate_answers`: grounds required, quotes verbatim and long
enough) with the client's one repair. A reply that still fails is stored as a missing rating
with the reason. Items are rated concurrently (bounded) and written in pack order.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, create_model

from curiosity_tui.ledger.sampling_record import SamplingTable
from curiosity_tui.modelio.call_schemas import CallSpec, Dialect, Rule
from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.modelio.sampling import sampling_scope
from curiosity_tui.packs.pack import PackItem
from curiosity_tui.packs.rating import (
    MODEL_PREFIX,
    ModelRating,
    QuestionAnswer,
    RatingError,
    RatingSession,
    check_quote,
    normalise_ws,
    quote_length_problem,
    rated_items,
    validate_answers,
)
from curiosity_tui.packs.schemes import Question, Scheme
from curiosity_tui.textsafe import terminal_safe

__all__ = [
    "RATE_KIND",
    "format_model_run",
    "ModelRatingRun",
    "rate_pack",
    "rating_messages",
    "rating_schema",
    "rating_spec",
    "reply_model",
]

RATE_KIND = "rate"
MAX_QUOTE_CHOICES = 40  # statements offered per question (bounds the schema's size)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
DEFAULT_MAX_TOKENS = 800
DEFAULT_CONCURRENCY = 4


class ModelRatingRun(BaseModel):
    """What one ``rate --model`` run did."""

    rater: str
    model: str
    endpoint: str | None
    items: int = Field(description="items in the pack")
    attempted: list[str] = Field(description="items rated this run (unrated or missing before)")
    rated: list[str]
    missing: dict[str, str] = Field(description="item → why the rating is missing")
    repaired: int = Field(description="ratings that needed the repair turn")


def clean_endpoint(base_url: str | None) -> str | None:
    """The base URL as stored in ratings: no user, password, query or fragment."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host  # an IPv6 address keeps its brackets
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _quote_slots(q: Question, n: int) -> type[BaseModel]:
    """The quotes as ``max_quotes`` slots (issue 27 item 7): the scheme's count said by the
    shape in every dialect; the first ``min_quotes`` are strings, the rest may be null. A
    missing slot reads as null (the schema sent requires every slot: :func:`_all_required`)."""
    fields: dict[str, Any] = {}
    for i in range(1, q.max_quotes + 1):
        fields[f"quote_{i}"] = (str, ...) if i <= q.min_quotes else (str | None, None)
    model: type[BaseModel] = create_model(
        f"Quotes{n}", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def _answer_model(q: Question, n: int) -> type[BaseModel]:
    category: Any = Literal[tuple(q.category_ids)]
    what = (
        f"{q.min_quotes} to {q.max_quotes} statements copied exactly from the item, one per slot"
        if q.max_quotes
        else "none: leave empty"
    )
    model: type[BaseModel] = create_model(
        f"Answer{n}",
        __config__=ConfigDict(extra="forbid"),
        category=(category, ...),
        grounds=(str, Field(description="one line: why this category")),
        quotes=(_quote_slots(q, n), Field(description=what)),
    )
    return model


@functools.lru_cache(maxsize=16)
def _reply_model(scheme_json: str) -> type[BaseModel]:
    scheme = Scheme.model_validate_json(scheme_json)
    fields: dict[str, Any] = {
        f"q{n}": (_answer_model(q, n), Field(alias=q.id))
        for n, q in enumerate(scheme.questions, start=1)
    }
    model: type[BaseModel] = create_model(
        "RatingReply", __config__=ConfigDict(extra="forbid", populate_by_name=True), **fields
    )
    return model


def reply_model(scheme: Scheme) -> type[BaseModel]:
    """The reply schema of a scheme: one object per question id, its category an enum."""
    return _reply_model(scheme.model_dump_json())


def _question_text(q: Question) -> str:
    cats = "\n".join(
        f"  - {c.id}: {c.label}" + (f" ({c.help})" if c.help else "") for c in q.categories
    )
    rules = [f"category: one of {', '.join(q.category_ids)}"]
    rules.append(
        "grounds: one line, required" if q.grounds_required else "grounds: one line (optional)"
    )
    if q.max_quotes:
        rules.append(
            f"quotes: {q.min_quotes} to {q.max_quotes}, each copied exactly from the item, at "
            f"least {q.quote_min_chars} characters and {q.quote_min_words} words"
            + (f" ({q.quote_help})" if q.quote_help else "")
        )
    else:
        rules.append("quotes: none (an empty object)")
    help_text = f"\n{q.help}" if q.help else ""
    return f"Question {q.id}: {q.prompt}{help_text}\n{cats}\n" + "\n".join(f"  {r}" for r in rules)


def rating_messages(scheme: Scheme, item: PackItem) -> list[dict[str, str]]:
    """The whole input of one rating: the scheme's text and the item's sections, nothing else
    (no item id, no other rater, nothing from the key)."""
    system = (
        "You are rating material for a blind study, as a human rater would.\n\n"
        f"{scheme.instructions}\n\n"
        + "\n\n".join(_question_text(q) for q in scheme.questions)
        + "\n\nReply with one JSON object with one entry per question id, each with "
        '"category", "grounds" and "quotes" (one quote per slot, null for a slot left unused).'
    )
    body = "\n\n".join(
        f"=== {label} ===\n{text}"
        for label, text in zip(scheme.sections, item.sections, strict=True)
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"The item to rate:\n\n{body}"},
    ]


def _answers_of(reply: BaseModel, scheme: Scheme) -> dict[str, QuestionAnswer]:
    """The reply as the human rating records keep it (quotes: the slots not null, in order,
    a statement named twice kept once)."""
    data = reply.model_dump(by_alias=True)
    out = {}
    for q in scheme.questions:
        answer = dict(data[q.id])
        quotes = [v for v in answer["quotes"].values() if v is not None]
        answer["quotes"] = list(dict.fromkeys(quotes))
        out[q.id] = QuestionAnswer.model_validate(answer)
    return out


def quote_choices(q: Question, item: PackItem) -> tuple[str, ...]:
    """The statements of ``item`` a quote for ``q`` may be: its sentences (split after ``.``,
    ``!``, ``?`` and at line breaks), whitespace folded, long enough for ``q``, verbatim in the
    item, each once, in item order, at most :data:`MAX_QUOTE_CHOICES`."""
    out: list[str] = []
    for section in item.sections:
        for piece in _SENTENCE_RE.split(section):
            text = normalise_ws(piece)
            if not text or text in out or quote_length_problem(text, q) is not None:
                continue
            if check_quote(text, item.sections).ok:
                out.append(text)
    return tuple(out[:MAX_QUOTE_CHOICES])


def rating_spec(scheme: Scheme, item: PackItem | None = None) -> CallSpec:
    """The ``rate`` call's spec: the reply model and, per quote slot, the item's statements it
    may be (an ``enum``: verbatim and long enough by construction, in every dialect) and the
    scheme's least length (``full``). Checked after the reply: grounds required; two slots
    naming the same statement count once (:func:`_answers_of`)."""
    rules = tuple(
        Rule(
            f"{q.id}.quotes[]",
            one_of=None if item is None else quote_choices(q, item),
            min_length=q.quote_min_chars,
            enforced=False,
        )
        for q in scheme.questions
        if q.max_quotes
    )
    return CallSpec(reply_model(scheme), rules)


def rating_schema(scheme: Scheme, dialect: Dialect, item: PackItem | None = None) -> dict[str, Any]:
    """The JSON schema sent with a ``rate`` call on ``item`` in ``dialect`` (every slot
    required)."""
    schema: dict[str, Any] = _all_required(rating_spec(scheme, item).json_schema(dialect))
    return schema


def _all_required(node: Any) -> Any:
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            node["required"] = list(node["properties"])
        node.pop("default", None)
        for value in node.values():
            _all_required(value)
    elif isinstance(node, list):
        for value in node:
            _all_required(value)
    return node


def _validator(scheme: Scheme, item: PackItem) -> Callable[[BaseModel], None]:
    """The human validators on a model's reply; a failure becomes the repair turn's text."""

    def check(reply: BaseModel) -> None:
        try:
            validate_answers(scheme, item, _answers_of(reply, scheme))
        except RatingError as err:
            raise ValueError(str(err).replace(f"item {item.id}, ", "", 1)) from None

    return check


_Outcome = tuple[dict[str, QuestionAnswer] | None, ModelRating, str | None]


async def _rate_one(
    client: ModelClient,
    scheme: Scheme,
    item: PackItem,
    n: int,
    max_tokens: int,
    dialect: Dialect = "strict",
) -> _Outcome:
    """(answers or None, the model record, the reason a rating is missing)."""
    endpoint = clean_endpoint(client.base_url)
    try:
        reply, record = await client.structured(
            kind=RATE_KIND,
            session=n,
            messages=rating_messages(scheme, item),
            schema=reply_model(scheme),
            max_tokens=max_tokens,
            internal=False,
            validator=_validator(scheme, item),
            wire_schema=rating_schema(scheme, dialect, item),
            dialect=dialect,
        )
    except ModelCallError as err:
        fmt = err.records[-1].response_format if err.records else None
        by = ModelRating(
            model=client.model,
            endpoint=endpoint,
            response_format=fmt,
            calls=len(err.records),
            code=err.code,
            sampling=err.records[-1].sampling if err.records else None,
        )
        return None, by, err.reason
    by = ModelRating(
        model=client.model,
        endpoint=endpoint,
        response_format=record.response_format,
        calls=1 + len(record.earlier),
        sampling=record.sampling,
    )
    return _answers_of(reply, scheme), by, None


async def rate_pack(
    session: RatingSession,
    client: ModelClient,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    progress: Callable[[str, bool], None] | None = None,
    sampling: SamplingTable | None = None,
    dialect: Dialect = "strict",
) -> ModelRatingRun:
    """Rate every item the model rater has no rating of yet (unrated, or missing before),
    at most ``concurrency`` calls at a time, saving each in pack order as soon as it and
    every item before it are done. ``dialect``: the schema dialect (the endpoint probe's)."""
    if not session.rater.startswith(MODEL_PREFIX):
        raise RatingError(f"rater {session.rater!r} is not a model rater (use model:NAME)")
    if concurrency < 1:
        raise RatingError(f"--concurrency must be at least 1, got {concurrency}")
    done = rated_items(session.records)
    todo = [i for i in session.order if i not in done]
    gate = asyncio.Semaphore(concurrency)
    place = {item_id: n for n, item_id in enumerate(session.order, start=1)}

    # the rater group of ``sampling`` (default: the protocol's, temperature 0); each call's seed
    # from the rater's name and the item's place (modelio/sampling.py)
    table = (sampling or SamplingTable()).resolved()

    async def bounded(item_id: str) -> _Outcome:
        async with gate:
            item = session.pack.item(item_id)
            with sampling_scope(table, session.rater):
                return await _rate_one(
                    client, session.scheme, item, place[item_id], max_tokens, dialect
                )

    tasks = [asyncio.ensure_future(bounded(i)) for i in todo]
    run = ModelRatingRun(
        rater=session.rater,
        model=client.model,
        endpoint=clean_endpoint(client.base_url),
        items=session.n,
        attempted=todo,
        rated=[],
        missing={},
        repaired=0,
    )
    try:
        for item_id, task in zip(todo, tasks, strict=True):
            answers, by, reason = await task
            _save(session, run, item_id, answers, by, reason)
            if progress is not None:
                progress(item_id, reason is None)
    finally:
        for task in tasks:
            task.cancel()
    return run


def _save(
    session: RatingSession,
    run: ModelRatingRun,
    item_id: str,
    answers: dict[str, QuestionAnswer] | None,
    by: ModelRating,
    reason: str | None,
) -> None:
    if answers is None:
        session.save_missing(item_id, reason or "no reason given", by)
        run.missing[item_id] = reason or "no reason given"
        return
    session.save(item_id, answers, by_model=by)
    run.rated.append(item_id)
    if by.calls > 1:
        run.repaired += 1


def format_model_run(run: ModelRatingRun) -> str:
    """The run as text: what was rated, what is missing and why."""
    lines = [
        f"{run.rater} ({run.model} at {run.endpoint or 'the default endpoint'}): "
        f"{len(run.attempted)} of {run.items} items to rate; {len(run.rated)} rated"
        f" ({run.repaired} after a repair), {len(run.missing)} missing"
    ]
    # a reason can quote the model (a refusal's text): untrusted, shown on one safe line
    lines += [
        f"  missing {item}: {terminal_safe(' '.join(why.split()))}"
        for item, why in run.missing.items()
    ]
    if run.missing:
        lines.append("run the same command again to retry the missing ones")
    return "\n".join(lines)
