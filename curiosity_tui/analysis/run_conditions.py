"""The report's "How the runs were run" section (issue 23): the sampling each run stated, what
"server-default" meant, parameters the server refused, what the server said it was (and when
that changed between sessions), what the replies said produced them, and the tool.

Runs that say the same are reported together; a run from before these were recorded says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curiosity_tui.analysis.markdown import md_cell
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.ledger.endpoint_record import EndpointCapabilities, ServerChange
from curiosity_tui.ledger.sampling_record import GROUPS, SamplingTable
from curiosity_tui.provenance import Provenance

__all__ = ["conditions_section", "reply_identities"]


def _sampling_line(meta: dict[str, Any]) -> str:
    raw = (meta.get("options") or {}).get("sampling")
    if raw is None:
        return "sampling: not recorded (a run from before it was): the server's defaults"
    table = SamplingTable.model_validate(raw)
    parts = [f"seed {table.seed}"]
    for group in GROUPS:
        v = table.values_for({"judge": "judge-after", "rater": "rate"}.get(group, group))
        parts.append(f"{group} T={v.temperature} top_p={v.top_p}")
    return "sampling: " + "; ".join(parts)


def _tension_line(meta: dict[str, Any]) -> list[str]:
    """The run's tension setting (issue 26) when it is not the pilot's (nothing otherwise)."""
    raw = (meta.get("options") or {}).get("tension")
    if not isinstance(raw, dict):
        return []
    parts = [f"tension: {raw.get('measure', 'as-run')}"]
    if raw.get("weights"):
        w = raw["weights"]
        parts.append(
            "weights " + ", ".join(f"{k} {w[k]:g}" for k in ("D", "H", "F", "U") if k in w)
        )
    if raw.get("per_candidate"):
        parts.append("Δ per candidate (none meets ε: PRESERVE the medoid)")
    if raw.get("service_sessions"):
        parts.append("service sessions " + ", ".join(str(t) for t in raw["service_sessions"]))
    return ["; ".join(parts)]


def _server_lines(endpoint: EndpointCapabilities | None) -> list[str]:
    if endpoint is None:
        return ["server: not probed"]
    lines = [
        f"server defaults: {endpoint.sampling_defaults or 'unknown (the server does not say)'}"
    ]
    if endpoint.refused_sampling:
        lines.append(f"refused by the server (not sent): {', '.join(endpoint.refused_sampling)}")
    who = endpoint.server_props or {}
    ident = [f"model {endpoint.model}"]
    ident += [f"{k} {who[k]}" for k in ("model_path", "build_info") if k in who]
    if "chat_template_sha256" in who:
        ident.append(f"chat template sha256 {str(who['chat_template_sha256'])[:12]}")
    if endpoint.model_file is not None:
        ident.append(f"model file sha256 {endpoint.model_file.sha256[:12]}")
    lines.append("server: " + ", ".join(ident))
    return lines


def reply_identities(path: Path) -> list[tuple[int, set[tuple[str | None, str | None]]]]:
    """(session, {(response model, system_fingerprint)}) of a ledger's committed sessions."""
    from curiosity_tui.ledger import Ledger

    out = []
    with Ledger.open(path) as led:
        for rec in led.session_records():
            seen = {
                (c.response_model, c.system_fingerprint)
                for c in rec.calls
                if c.response_model is not None or c.system_fingerprint is not None
            }
            if seen:
                out.append((rec.session, seen))
    return out


def _pairs(seen: set[tuple[str | None, str | None]]) -> str:
    return ", ".join(sorted(f"{m or '?'} / {f or '-'}" for m, f in seen))


def _reply_changes(run: RunData) -> list[str]:
    """ "the replies' model/fingerprint changed between s2 and s3" lines."""
    path = Path(run.origin)
    if not (path / "journal.jsonl").is_file():
        return []
    out = []
    sessions = reply_identities(path)
    for (t0, a), (t1, b) in zip(sessions, sessions[1:], strict=False):
        if a != b:
            out.append(
                f"the replies' model / system_fingerprint changed between s{t0} and s{t1}: "
                f"{_pairs(a)} to {_pairs(b)}"
            )
    return out


def _run_lines(run: RunData) -> tuple[list[str], list[str]]:
    """(lines that runs can share, lines about this run alone)."""
    meta = run.meta
    endpoint = (
        EndpointCapabilities.model_validate(meta["endpoint"]) if meta.get("endpoint") else None
    )
    shared = [_sampling_line(meta), *_server_lines(endpoint), *_tension_line(meta)]
    prov = meta.get("provenance")
    shared.append(
        "tool: " + (Provenance.model_validate(prov).summary() if prov else "not recorded")
    )
    own = [ServerChange.model_validate(c).summary() for c in meta.get("server_changes") or []]
    own += _reply_changes(run)
    return shared, own


def conditions_section(runs: list[RunData]) -> list[str]:
    """The section's Markdown lines."""
    groups: dict[tuple[str, ...], list[str]] = {}
    alone: list[str] = []
    for run in runs:
        shared, own = _run_lines(run)
        groups.setdefault(tuple(shared), []).append(run.run_id)
        alone += [f"- **{md_cell(run.run_id)}**: {md_cell(x)}" for x in own]
    lines = ["## How the runs were run (sampling, server, tool)", ""]
    for said, ids in groups.items():
        lines.append(f"Runs {md_cell(', '.join(ids))}:")
        lines += ["", *(f"- {md_cell(x)}" for x in said), ""]
    if alone:
        lines += ["Changes during runs:", "", *alone, ""]
    else:
        lines += ["No run's server changed between its sessions.", ""]
    return lines
