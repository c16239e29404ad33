"""A session's model calls as text: the call list (one line a call, with its start and end
time) and one call's header lines (its sampling and times). Issue 23.1 and 23.4.

Calls recorded before times and sampling were (older ledgers) say so instead of showing
nothing, so a reader never takes an absence for a value.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.widgets.literal import clean

NOT_RECORDED = "not recorded"


def clock_of(stamp: str | None) -> str:
    """``HH:MM:SS.ffffff`` of a UTC timestamp (``2026-01-02T10:11:12.123456Z``)."""
    if not stamp:
        return NOT_RECORDED
    _, _, time_part = stamp.partition("T")
    return clean(time_part.rstrip("Z") or stamp, oneline=True)


def sampling_line(call: CallRecord) -> str:
    """What the call was sent with, or why that is not known."""
    if call.sampling is None:
        if call.response_format == "embeddings":
            return "sampling: none (an embeddings call)"
        return f"sampling: {NOT_RECORDED} (a call recorded before sampling was)"
    return "sampling: " + clean(call.sampling.summary(), oneline=True)


def time_line(call: CallRecord) -> str:
    """``started … · ended … UTC · 1.234 s``."""
    if call.started_at is None:
        return f"times: {NOT_RECORDED} · {call.latency_s:.3f} s"
    return (
        f"started {clean(call.started_at, oneline=True)} · "
        f"ended {clean(call.ended_at or NOT_RECORDED, oneline=True)} · {call.latency_s:.3f} s"
    )


def cache_line(call: CallRecord) -> str | None:
    """Where a cached reply came from (issue 23.5); None for a call that was sent."""
    if not call.cached:
        return None
    origin = call.cached_from
    when = clean(origin.started_at or NOT_RECORDED, oneline=True) if origin else NOT_RECORDED
    digest = origin.request_sha256[:12] if origin else "?"
    return f"cached: not sent; the reply of the call started {when} (request {digest})"


def call_detail(call: CallRecord) -> Text:
    """The header lines of one call's view (after its kind and model): sampling, times, and
    where a cached reply came from."""
    out = Text(end="")
    out.append("\n" + sampling_line(call), style="dim")
    out.append("\n" + time_line(call), style="dim")
    cached = cache_line(call)
    if cached:
        out.append("\n" + cached, style="yellow")
    return out


def call_list(calls: Sequence[CallRecord]) -> Text:
    """One line a call, in the order recorded: number, kind, start and end (UTC), seconds,
    temperature and seed, and an error mark."""
    out = Text(end="")
    out.append(f"{'#':>3}  {'kind':<14} {'started (UTC)':<16} {'ended (UTC)':<16} {'s':>8}  ")
    out.append("temperature  seed\n", style="bold")
    for n, call in enumerate(calls, start=1):
        temp = seed = "-"
        if call.sampling is not None:
            temp, seed = str(call.sampling.temperature), str(call.sampling.seed)
        line = (
            f"{n:>3}  {clean(call.kind, oneline=True)[:14]:<14} {clock_of(call.started_at):<16} "
            f"{clock_of(call.ended_at):<16} {call.latency_s:>8.3f}  {temp:<12} {seed}"
        )
        out.append(line, style="red" if call.error else "")
        if call.error:
            out.append("  (failed)", style="red")
        if call.cached:
            out.append("  (cached)", style="yellow")
        out.append("\n")
    if not calls:
        out.append("(no model calls in this session)", style="dim italic")
    return out
