"""What a pack looked like when its key was opened, kept where cutting the log cannot reach.

``unblind`` logs ``key_opened`` (with every ratings file's sha256) in ``log.jsonl``; but
truncating that log to its first line reopened adjudication, and deleting it dropped the
build-record check. So each opening also appends a *seal* — the log's length and the hash
of its ``key_opened`` entry, each ratings file's sha256 and record count, the adjudication
file's — to two files: ``PACKDIR/key_opened.jsonl`` and ``NAME.key.opened.jsonl`` beside the
key (outside the pack). Every later ``unblind``, ``agreement`` and ``adjudicate``:

- refuses, in one line, a log that is missing, does not begin with the build record, or no
  longer holds the sealed ``key_opened`` entry (cut or rewritten after unblinding);
- names each ratings or adjudication file changed, added or removed since the last opening.

Decision 403 (issue 25, item 3).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from curiosity_tui.atomic import append_line_durable
from curiosity_tui.packs.pack import LOG_FILE, Pack, PackError, default_key_path, sha256_bytes
from curiosity_tui.textfiles import utf8_lines

SEAL_FILE = "key_opened.jsonl"


class Seal(BaseModel):
    log_seq: int
    log_hash: str
    ts: str
    by: str
    files: dict[str, dict[str, Any]]
    adjudication: dict[str, Any]


def seal_paths(pack: Pack) -> list[Path]:
    """The pack's own seal file and the one beside its default key."""
    key = default_key_path(pack.path)
    return [pack.path / SEAL_FILE, key.with_name(key.name.removesuffix(".json") + ".opened.jsonl")]


def read_seals(pack: Pack) -> list[Seal]:
    """Every seal from either file, one per log seq, in seq order. A damaged line is refused
    with its file and line."""
    by_seq: dict[int, Seal] = {}
    for path in seal_paths(pack):
        if not path.is_file():
            continue
        for lineno, line in utf8_lines(path, PackError):
            if not line.strip():
                continue
            try:
                seal = Seal.model_validate_json(line)
            except ValidationError:
                raise PackError(f"{path}:{lineno}: damaged unblinding seal") from None
            by_seq.setdefault(seal.log_seq, seal)
    return [by_seq[k] for k in sorted(by_seq)]


def write_seal(pack: Pack, seal: Seal) -> None:
    line = (json.dumps(seal.model_dump(mode="json"), sort_keys=True) + "\n").encode("utf-8")
    for path in seal_paths(pack):
        append_line_durable(path, line)


def check_log(pack: Pack, entries: list[Any], seals: list[Seal]) -> None:
    """Refuse a log that lost its build record or an entry sealed at unblinding."""
    log = pack.path / LOG_FILE
    if not entries or entries[0].kind != "pack_built":
        what = "is missing" if not log.exists() else "does not begin with the build record"
        raise PackError(
            f"{log}: the pack log {what} (every pack is built with one): the build record "
            "and the unblinding cannot be checked; refused"
        )
    for seal in seals:
        if len(entries) < seal.log_seq or entries[seal.log_seq - 1].hash != seal.log_hash:
            raise PackError(
                f"{log}: holds {len(entries)} entries, but the key was opened at seq "
                f"{seal.log_seq} ({pack.path / SEAL_FILE}): the log was cut or rewritten after "
                "unblinding; refused"
            )


def changes_since(
    seals: list[Seal], files: dict[str, dict[str, Any]], adjudication: dict[str, Any]
) -> list[str]:
    """Each ratings file (rater → {sha256, records}) and the adjudication file changed, added
    or removed since the last opening, one phrase each."""
    if not seals:
        return []
    last = seals[-1]
    at = f"since the key was opened (log seq {last.log_seq}, {last.ts})"
    out = []
    for rater in sorted(set(last.files) | set(files)):
        then, now = last.files.get(rater, {}), files.get(rater, {})
        if then.get("sha256") == now.get("sha256"):
            continue
        name = f"ratings/{rater}.jsonl"
        if then.get("sha256") is None:
            out.append(f"{name} added {at}")
        elif now.get("sha256") is None:
            out.append(f"{name} removed {at}")
        else:
            out.append(
                f"{name} changed {at}: {then.get('records')} records then, {now.get('records')} now"
            )
    if last.adjudication.get("sha256") != adjudication.get("sha256"):
        out.append(f"adjudication.jsonl changed {at}")
    return out


def file_stamp(path: Path) -> dict[str, Any]:
    """sha256 and non-empty line count of a file as it stands (None, 0 when there is none)."""
    if not path.exists():
        return {"sha256": None, "records": 0}
    raw = path.read_bytes()
    return {"sha256": sha256_bytes(raw), "records": sum(1 for x in raw.split(b"\n") if x.strip())}
