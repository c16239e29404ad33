"""Practice never looks like results (decision 442): whether a set of runs' replies came
from a model, from the built-in scripted server (``pilot run --scripted``, ``demo``), or both.

Every analysis output over scripted runs carries :func:`banner` at its top and a ``replies``
column or field (``scripted`` / ``model``, ``mixed`` where a figure pools both); ``verdict``
refuses a mix unless ``--allow-mixed`` and then names the scripted runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.errors import InputError
from curiosity_tui.practice_banner import SCRIPTED_BANNER, Replies, banner, replies_of

__all__ = [
    "SCRIPTED_BANNER",
    "Practice",
    "Replies",
    "banner",
    "practice_md",
    "stamp_svg",
    "practice_of",
    "refuse_mixed",
    "replies_fields",
    "replies_of",
    "replies_row",
    "run_replies",
    "scripted_run_ids",
]


def run_replies(run: RunData) -> Literal["model", "scripted"]:
    """``scripted`` when the run's metadata says its replies came from the scripted server."""
    options = run.meta.get("options") if isinstance(run.meta, dict) else None
    return "scripted" if isinstance(options, dict) and options.get("scripted") else "model"


class Practice(BaseModel):
    """The replies behind a set of runs, with the scripted runs named."""

    replies: Replies
    scripted_runs: list[str]
    model_runs: int


def practice_of(runs: Sequence[RunData]) -> Practice:
    scripted = [r.run_id for r in runs if run_replies(r) == "scripted"]
    return Practice(
        replies=replies_of(run_replies(r) for r in runs),
        scripted_runs=scripted,
        model_runs=len(runs) - len(scripted),
    )


def refuse_mixed(practice: Practice, where: str, *, allow_mixed: bool) -> None:
    """:class:`InputError` when scripted and model runs are mixed and that was not allowed."""
    if practice.replies != "mixed" or allow_mixed:
        return
    first = practice.scripted_runs[0]
    raise InputError(
        f"{where}: {len(practice.scripted_runs)} scripted run(s) (first: {first}) beside "
        f"{practice.model_runs} model run(s); a verdict over both mixes practice with results "
        "(--allow-mixed to evaluate anyway, named in the output)"
    )


class _HasReplies(Protocol):  # a MetricsDoc, without importing the tables
    configs: list[str]
    replies_by_config: dict[str, str]
    run_replies: dict[str, str]


def replies_fields(runs: Sequence[RunData], *, split: bool) -> dict[str, Any]:
    """A MetricsDoc's ``replies``, ``replies_by_config`` and ``run_replies``."""
    by_config: dict[str, list[str]] = {}
    for r in runs:
        by_config.setdefault(r.cell(split), []).append(run_replies(r))
    return {
        "replies": replies_of(run_replies(r) for r in runs),
        "replies_by_config": {c: replies_of(v) for c, v in by_config.items()},
        "run_replies": {r.run_id: run_replies(r) for r in runs},
    }


def scripted_run_ids(doc: _HasReplies) -> list[str]:
    return [k for k, v in doc.run_replies.items() if v == "scripted"]


def replies_row(doc: _HasReplies) -> list[str]:
    """A Markdown table row naming each configuration's replies; none when all are a model's."""
    labels = [doc.replies_by_config.get(c, "model") for c in doc.configs]
    if all(x == "model" for x in labels):
        return []
    return ["| replies | " + " | ".join(labels) + " |"]


def practice_md(label: str) -> list[str]:
    """The label as a Markdown block quote at a report's top; none when empty."""
    return [f"> **{label}**", ""] if label else []


def stamp_svg(path: Path, label: str) -> None:
    """Write ``label`` into an SVG figure: its ``<title>`` and a line of text at its top."""
    text = path.read_text(encoding="utf-8")
    at = text.find(">", text.find("<svg")) + 1
    if at <= 0:
        return
    safe = label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    mark = (
        f"<title>{safe}</title>"
        f'<text x="4" y="10" font-family="sans-serif" font-size="8" fill="#b00000">{safe}</text>'
    )
    path.write_text(text[:at] + mark + text[at:], encoding="utf-8")
