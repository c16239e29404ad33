"""Runs that did not come from the pilot that claims them: created after the pilot that ran
them finished, or against another endpoint or model than the plan's and the other runs'.

``pilot run`` keeps every shard record it writes in ``OUT/.pilot/history.jsonl`` (append
only; the shard files hold the latest). A run whose ``created_at`` is after the finish of
the pilot record that listed it was deleted and re-created; one in no record, created after
the last pilot finished, was added later. ``verdict`` and ``report`` name each such run in
their notes (issue 25, item 4; decision 404). Nothing here refuses: the reviewer decides.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.analysis.runstamps import parse_ts

PILOT_DIR = ".pilot"
ONE_SECOND = timedelta(seconds=1)
HISTORY_FILE = "history.jsonl"


def _records_in(directory: Path) -> list[dict[str, Any]]:
    pilot = directory / PILOT_DIR
    texts: list[str] = []
    try:
        history = pilot / HISTORY_FILE
        if history.is_file():
            texts += history.read_text(encoding="utf-8", errors="replace").splitlines()
        texts += [
            p.read_text(encoding="utf-8", errors="replace") for p in pilot.glob("shard-*.json")
        ]
    except OSError:
        return []
    out = []
    for text in texts:
        try:
            rec = json.loads(text)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("runs"), list):
            out.append(rec)
    return out


#: what the re-creation check needs of a run: (run id, created_at, where it is)
Created = tuple[str, str, str]


def pilot_records(origins: Sequence[str]) -> list[dict[str, Any]]:
    """Every shard record in the ``.pilot`` folders beside or above the runs' ledgers."""
    dirs: set[Path] = set()
    for origin in origins:
        if origin:
            p = Path(origin)
            dirs.update({p.parent, p.parent.parent})
    return [rec for d in sorted(dirs) for rec in _records_in(d)]


def _names(rec: dict[str, Any]) -> set[str]:
    return {
        r["name"] for r in rec["runs"] if isinstance(r, dict) and isinstance(r.get("name"), str)
    }


def late_runs(runs: Sequence[Created], records: list[dict[str, Any]]) -> list[str]:
    # a record's finished_at is cut to the second (utc_now_seconds): the pilot ended before
    # the next whole second, so only a run created from then on is late
    finished = [
        (rec, t + ONE_SECOND)
        for rec in records
        if (t := parse_ts(str(rec.get("finished_at") or ""))) is not None
    ]
    if not finished:
        return []
    last = max(t for _, t in finished)
    notes = []
    for run_id, created_at, _origin in runs:
        created = parse_ts(created_at)
        if created is None:
            continue
        listed = [t for rec, t in finished if run_id in _names(rec)]
        if listed and created >= min(listed):
            notes.append(
                f"run {run_id} was created at {created_at}, after the pilot that ran it "
                f"finished ({(min(listed) - ONE_SECOND).isoformat()}): it was deleted and re-created"
            )
        elif not listed and created >= last:
            notes.append(
                f"run {run_id} was created at {created_at}, after the pilot closed "
                f"({(last - ONE_SECOND).isoformat()}), and is in no pilot record"
            )
    return notes


def _endpoint(run: RunData) -> tuple[str, str]:
    ep = run.meta.get("endpoint")
    ep = ep if isinstance(ep, dict) else {}
    url = str(ep.get("base_url") or "")
    parts = urlsplit(url)
    if parts.hostname in ("127.0.0.1", "localhost", "::1"):  # scripted servers: any port
        url = f"{parts.scheme}://{parts.hostname}"
    return url, str(ep.get("model") or run.meta.get("model") or "")


def foreign_endpoints(runs: Sequence[RunData], plan_model: str | None) -> list[str]:
    seen = {r.run_id: _endpoint(r) for r in runs if r.meta.get("endpoint")}
    if not seen:
        return []
    notes = []
    if plan_model:
        for rid, (url, model) in seen.items():
            if model and model != plan_model:
                notes.append(
                    f"run {rid} ran model {model!r} at {url or '?'}; the plan names {plan_model!r}"
                )
    common, _ = Counter(seen.values()).most_common(1)[0]
    for rid, (url, model) in seen.items():
        if url != common[0] and (not plan_model or model == plan_model):
            notes.append(
                f"run {rid} ran against {url or '?'} (model {model!r}); most runs against "
                f"{common[0] or '?'} (model {common[1]!r})"
            )
    return notes


def origin_notes(runs: Sequence[RunData], plan_model: str | None) -> list[str]:
    created = [(r.run_id, str(r.meta.get("created_at") or ""), r.origin) for r in runs]
    late = late_runs(created, pilot_records([r.origin for r in runs]))
    return late + foreign_endpoints(runs, plan_model)
