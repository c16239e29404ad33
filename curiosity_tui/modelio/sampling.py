"""Sampling on the wire (issue 23.1): the values a chat call is sent with, and their seed.

The run's table (:class:`~curiosity_tui.ledger.sampling_record.SamplingTable`) and the run's
name are set around a run by :func:`sampling_scope`; the draw a call makes (``candidate-2``,
``checker-r1``, ``judge-after``) by :func:`draw_scope` around the call. Both are context
variables, as the run name of ``X-Curiosity-Run`` is (``run_context.py``): concurrent runs and
the concurrent calls of one session are asyncio tasks, each with its own copy, so one shared
client sends each call its own values. Outside a run (the endpoint probe, tests that call the
client directly) nothing is set and nothing is sent: the request is what it was before.

A call's seed is derived from the run's seed, the run's name, the session and the draw
(:func:`call_seed`): a rerun of the run asks for the same draws, the three candidates of one
session (same prompt) ask for three different ones, and two runs of one configuration are not
the same run twice.

A server that refuses a parameter (HTTP 400/422 whose message names it) is negotiated as the
response format is: the client stops sending it (:func:`refused_param`), the call records it
under ``refused``, and the endpoint probe records it once in the endpoint record.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from curiosity_tui.ledger.sampling_record import (
    SERVER_DEFAULT,
    CallSampling,
    SamplingTable,
)

__all__ = [
    "WIRE_PARAMS",
    "RunSampling",
    "call_sampling",
    "call_seed",
    "draw_scope",
    "note_refusal",
    "refused_by_server",
    "refused_param",
    "sampling_scope",
    "table_of_options",
]

WIRE_PARAMS = ("temperature", "top_p", "seed", "stop", "frequency_penalty")

AFTER_CUT_FREQUENCY_PENALTY = 0.5
"""The ``frequency_penalty`` of the retry after a reply cut at its cap (decision 600): a cut is
almost always a loop ("1.1.1.1", "The answer is: The answer is: …"), which the same sampling
repeats; the retry also asks with its own seed. Sent only on that retry, recorded with it."""


@dataclass(frozen=True)
class RunSampling:
    table: SamplingTable
    run: str


CURRENT_SAMPLING: ContextVar[RunSampling | None] = ContextVar(
    "curiosity_current_sampling", default=None
)
CURRENT_DRAW: ContextVar[str | None] = ContextVar("curiosity_current_draw", default=None)


def table_of_options(options: dict[str, Any] | None) -> SamplingTable:
    """The table a run's metadata records (``options["sampling"]``); a ledger from before
    sampling was recorded: :meth:`SamplingTable.legacy` (nothing sent, as then)."""
    raw = (options or {}).get("sampling")
    if raw is None:
        return SamplingTable.legacy()
    return SamplingTable.model_validate(raw)


@contextlib.contextmanager
def sampling_scope(table: SamplingTable, run: str) -> Iterator[None]:
    """Chat calls made inside belong to run ``run`` and use ``table`` (restored on exit)."""
    token = CURRENT_SAMPLING.set(RunSampling(table, run))
    try:
        yield
    finally:
        CURRENT_SAMPLING.reset(token)


@contextlib.contextmanager
def draw_scope(draw: str | None) -> Iterator[None]:
    """Chat calls made inside are the draw ``draw`` of their session (its seed's last part)."""
    token = CURRENT_DRAW.set(draw)
    try:
        yield
    finally:
        CURRENT_DRAW.reset(token)


def call_seed(run_seed: int, run: str, session: int, draw: str) -> int:
    """A call's seed: 31 bits of sha256 over the run's seed, its name, the session and the
    draw (a separator byte between them, so no two tuples share a text)."""
    text = "\x1f".join((str(run_seed), run, str(session), draw))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big") & 0x7FFFFFFF


def call_sampling(
    kind: str,
    session: int,
    refused: frozenset[str] | set[str] = frozenset(),
    *,
    after_cut: bool = False,
) -> tuple[dict[str, Any], CallSampling] | None:
    """The request parameters of a chat call of ``kind`` in ``session`` and the record of them;
    None outside a run (nothing is sent). ``refused``: parameters the server rejected.
    ``after_cut``: the retry after a reply cut at its cap (its own seed, a repetition penalty)."""
    current = CURRENT_SAMPLING.get()
    if current is None:
        return None
    values = current.table.values_for(kind)
    seed: int | str = current.table.seed
    if isinstance(seed, int):
        draw = CURRENT_DRAW.get() or kind
        seed = call_seed(seed, current.run, session, f"{draw}/after-cut" if after_cut else draw)
    record = CallSampling(
        temperature=values.temperature,  # type: ignore[arg-type]
        top_p=values.top_p,  # type: ignore[arg-type]
        seed=seed,  # type: ignore[arg-type]
        stop=values.stop,  # type: ignore[arg-type]
        frequency_penalty=AFTER_CUT_FREQUENCY_PENALTY if after_cut else None,
    )
    params: dict[str, Any] = {}
    for name in WIRE_PARAMS:
        value = getattr(record, name)
        if value is None or value == SERVER_DEFAULT or value == []:  # nothing to send
            continue
        if name in refused:
            record.refused.append(name)
            continue
        params[name] = value
    return params, record


def refused_param(message: str, sent: dict[str, Any]) -> str | None:
    """The sampling parameter a 400/422 error ``message`` names, among those ``sent``; None
    when it names none (another problem: the call fails as before)."""
    lowered = message.lower()
    for name in sent:
        for form in (f"'{name}'", f'"{name}"', f"`{name}`", f" {name} ", f" {name}:", f"{name}="):
            if form in f" {lowered} ":
                return name
    return None


def refused_by_server(
    exc: Exception, text: str, sampled: tuple[dict[str, Any], Any] | None
) -> tuple[str, str] | None:
    """(parameter, the server's message) when ``exc`` is a 400/422 (not a context overflow)
    whose message ``text`` names a sampling parameter the call sent; else None."""
    from curiosity_tui.modelio import retry as rt

    if sampled is None or rt.status_of(exc) not in (400, 422) or rt.is_context_overflow(exc):
        return None
    name = refused_param(text, sampled[0])
    return (name, text) if name is not None else None


def note_refusal(
    refused: dict[str, str], exc: Exception, text: str, sampled: tuple[dict[str, Any], Any] | None
) -> bool:
    """Record in ``refused`` (parameter -> the server's message) a sampling parameter that
    ``exc`` (message ``text``) refuses; True when there was one (the call goes again without)."""
    found = refused_by_server(exc, text, sampled)
    if found is None:
        return False
    refused[found[0]] = found[1][:300]
    return True
