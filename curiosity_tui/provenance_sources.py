"""Where an artifact keeps its provenance, read back (``curiosity-tui provenance PATH``).

A ledger: its run metadata, and each session record that ran under another tool; a pack: its
manifest (and, in a rater's copy, ``export.json``); a prereg chain: each lock entry; a ratings
file: each distinct block of its records; a Markdown report: its footer comment; any other file
(a CSV): its ``FILE.provenance.json`` sidecar, checked against the file's bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from curiosity_tui.errors import InputError
from curiosity_tui.provenance import MARKDOWN_MARK, Provenance, Sidecar, sidecar_path

__all__ = ["Found", "find_provenance"]


@dataclass
class Found:
    """One block: what it belongs to (``ledger run metadata``, ``lock seq 2`` …) and a note."""

    where: str
    provenance: Provenance
    note: str = ""


def _block(data: Any, where: str) -> Provenance | None:
    if data is None:
        return None
    try:
        return Provenance.model_validate(data)
    except ValidationError as err:
        why = err.errors()[0]["msg"]
        raise InputError(f"{where}: the provenance block is malformed ({why})") from None


def _ledger(path: Path) -> list[Found]:
    from curiosity_tui.ledger import Ledger

    with Ledger.open(path) as led:
        meta, records = led.meta, led.session_records()
    out = []
    if meta.provenance is not None:
        out.append(Found("ledger run metadata (what created it)", meta.provenance))
    for rec in records:
        if rec.provenance is not None:
            out.append(Found(f"session {rec.session} (ran under a different tool)", rec.provenance))
    return out


def _pack(path: Path) -> list[Found]:
    out = []
    for name, where in (("manifest.json", "pack manifest"), ("export.json", "rater's copy")):
        f = path / name
        if f.is_file():
            data = json.loads(f.read_text(encoding="utf-8"))
            block = _block(data.get("provenance"), f"{f}")
            if block is not None:
                out.append(Found(where, block))
    return out


def _json_lines(path: Path) -> list[Found]:
    out: list[Found] = []
    seen: list[Provenance] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            raise InputError(f"{path}:{n}: not a JSON line") from None
        if not isinstance(data, dict):
            continue
        block = _block(data.get("provenance"), f"{path}:{n}")
        if block is None:
            continue
        if "plan_sha256" in data:
            out.append(Found(f"lock seq {data.get('seq')} ({data.get('stage')})", block))
        elif block not in seen:
            seen.append(block)
            who = f"rater {data.get('rater')}" if "rater" in data else "record"
            out.append(Found(f"{who}, from line {n}", block))
    return out


def _markdown(path: Path) -> list[Found]:
    for line in reversed(path.read_text(encoding="utf-8").splitlines()):
        if line.startswith(MARKDOWN_MARK) and line.endswith("-->"):
            raw = line[len(MARKDOWN_MARK) : -len("-->")].strip()
            try:
                data = json.loads(raw)
            except ValueError:
                raise InputError(f"{path}: the provenance comment is not JSON") from None
            block = _block(data, str(path))
            return [Found("report", block)] if block is not None else []
    return []


def _sidecar(path: Path) -> list[Found]:
    card_path = sidecar_path(path)
    if not card_path.is_file():
        return []
    try:
        card = Sidecar.model_validate_json(card_path.read_bytes())
    except ValidationError as err:
        why = err.errors()[0]["msg"]
        raise InputError(f"{card_path}: not a provenance sidecar ({why})") from None
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    note = "" if actual == card.sha256 else "STALE: the file changed after this was written"
    return [Found(f"sidecar {card_path.name}", card.provenance, note)]


def find_provenance(path: Path) -> list[Found]:
    """Every provenance block ``path`` carries (empty: none recorded). Raises InputError for
    a path that does not exist or a block that does not parse."""
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if path.is_dir():
        if (path / "journal.jsonl").is_file():
            return _ledger(path)
        if (path / "manifest.json").is_file():
            return _pack(path)
        raise InputError(f"{path}: a directory that is neither a ledger nor a pack")
    if path.name == "journal.jsonl":
        return _ledger(path.parent)
    if path.suffix == ".md":
        return _markdown(path) or _sidecar(path)
    if path.suffix == ".jsonl":
        return _json_lines(path) or _sidecar(path)
    return _sidecar(path)
