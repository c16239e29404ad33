"""The practice label's words: one label for the replies behind a set of outputs (model,
scripted or mixed) and the banner an output starts with (issue 28, decision 442). A foundation
module: analysis and packs both print it, and neither imports the other for it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

Replies = Literal["model", "scripted", "mixed"]

SCRIPTED_BANNER = (
    "SCRIPTED PRACTICE — every reply came from the built-in scripted server, not a model; "
    "nothing here is a result"
)


def replies_of(kinds: Iterable[str]) -> Replies:
    """One label for a set of runs' labels: model, scripted, or mixed."""
    seen = set(kinds)
    if seen == {"scripted"}:
        return "scripted"
    return "mixed" if seen & {"scripted", "mixed"} else "model"


def banner(replies: str, *, scripted_runs: Sequence[str] = ()) -> str:
    """The line an output starts with; "" when every reply came from a model."""
    if replies == "scripted":
        return SCRIPTED_BANNER
    if replies == "mixed" and not scripted_runs:
        return "MIXED: scripted and model replies are pooled here; such figures are not results"
    if replies == "mixed":
        named = ", ".join(scripted_runs[:6]) + (" …" if len(scripted_runs) > 6 else "")
        return (
            f"MIXED: {len(scripted_runs)} run(s) had scripted replies, not a model's "
            f"({named}); figures that pool them are not results"
        )
    return ""
