"""Adjudication records: the coordinator's category for an item and question where the raters
disagree, kept in ``PACKDIR/adjudication.jsonl`` — apart from the raw ratings, which are never
written here (decision 200).

The file is append-only: one record a line, ``seq`` counting lines from 1. A second record
for the same item and question is refused unless it names the record it replaces
(``replaces``: the seq of the one in force). Reading checks every line and names the file
and line of the first problem. Which items disagree, and whether adjudication is allowed at
all (ratings complete, key not yet opened), is :mod:`curiosity_tui.packs.disagreement`.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from curiosity_tui.atomic import append_line_durable
from curiosity_tui.clock import utc_now_milli
from curiosity_tui.errors import InputError, StorageError, os_reason
from curiosity_tui.packs.pack import ADJUDICATION_FILE, Pack
from curiosity_tui.packs.rating import normalise_ws, parse_iso_ts, validate_rater_name
from curiosity_tui.textfiles import utf8_lines

__all__ = [
    "AdjudicationError",
    "AdjudicationRecord",
    "adjudication_path",
    "adjudicator_actor",
    "append_adjudication",
    "current_adjudications",
    "read_adjudications",
]


class AdjudicationError(InputError):
    """An adjudication cannot be recorded, or the adjudication file is damaged."""


class AdjudicationRecord(BaseModel):
    pack_id: str
    seq: int = Field(ge=1, description="line number in adjudication.jsonl, from 1")
    item: str
    question: str
    category: str
    grounds: str = Field(min_length=1)
    adjudicator: str = Field(pattern=r"^human:[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    ts: str
    replaces: int | None = Field(
        default=None, description="seq of the record this one revises; None for the first"
    )
    raw: dict[str, str] = Field(
        default_factory=dict,
        description="rater → raw category when adjudicated (a copy; the ratings stay as they are)",
    )


def adjudication_path(packdir: Path) -> Path:
    return Path(packdir) / ADJUDICATION_FILE


def adjudicator_actor(name: str) -> str:
    """``NAME`` or ``human:NAME`` → ``human:NAME`` (NAME spelt like a rater name)."""
    bare = str(name).strip().removeprefix("human:")
    try:
        validate_rater_name(bare)
    except InputError:
        raise AdjudicationError(
            f"invalid coordinator name {name!r}: use 1–64 letters, digits, '.', '_' or '-'"
        ) from None
    return f"human:{bare}"


def _check_record(pack: Pack, rec: AdjudicationRecord, where: str) -> None:
    """The record fits the pack: its id, an item of the pack, a question and category of the
    scheme."""
    if rec.pack_id != pack.manifest.pack_id:
        raise AdjudicationError(
            f"{where}: the record is for pack {rec.pack_id!r}, not {pack.manifest.pack_id!r}"
        )
    if rec.item not in pack.items:
        raise AdjudicationError(f"{where}: no item {rec.item!r} in this pack")
    qids = [q.id for q in pack.scheme.questions]
    if rec.question not in qids:
        raise AdjudicationError(
            f"{where}: question {rec.question!r} is not in scheme {pack.scheme.id!r} "
            f"(its questions: {', '.join(qids)})"
        )
    cats = pack.scheme.question(rec.question).category_ids
    if rec.category not in cats:
        raise AdjudicationError(
            f"{where}: {rec.category!r} is not a category of {rec.question} ({', '.join(cats)})"
        )
    for rater, raw in rec.raw.items():  # the raw categories it settled (issue 25, item 9)
        if raw not in cats:
            raise AdjudicationError(
                f"{where}: raw category {raw!r} of rater {rater!r} is not a category of "
                f"{rec.question} ({', '.join(cats)})"
            )
    bad_ts = parse_iso_ts(rec.ts)
    if bad_ts is not None:
        raise AdjudicationError(f"{where}: {bad_ts}")


def _check_replaces(
    rec: AdjudicationRecord, in_force: dict[tuple[str, str], AdjudicationRecord], where: str
) -> None:
    """A first adjudication replaces nothing; a later one names the record in force."""
    current = in_force.get((rec.item, rec.question))
    if current is None and rec.replaces is not None:
        raise AdjudicationError(
            f"{where}: replaces record {rec.replaces}, but {rec.item} {rec.question} "
            "has no adjudication to replace"
        )
    if current is not None and rec.replaces != current.seq:
        raise AdjudicationError(
            f"{where}: {rec.item} {rec.question} is already adjudicated (record "
            f"{current.seq}, {current.category}); a revision must name it (replaces "
            f"{current.seq})"
        )


def read_adjudications(pack: Pack) -> list[AdjudicationRecord]:
    """Every record in file order, each checked against the pack and the ones before it."""
    path = adjudication_path(pack.path)
    if not path.exists():
        return []
    out: list[AdjudicationRecord] = []
    in_force: dict[tuple[str, str], AdjudicationRecord] = {}
    for lineno, line in utf8_lines(path, AdjudicationError):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            rec = AdjudicationRecord.model_validate_json(line)
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(x) for x in first["loc"]) or "the line"
            raise AdjudicationError(
                f"{where}: damaged adjudication record ({loc}: {first['msg']})"
            ) from None
        if rec.seq != len(out) + 1:
            raise AdjudicationError(
                f"{where}: record seq {rec.seq}, expected {len(out) + 1} "
                "(a record was removed, reordered or copied)"
            )
        _check_record(pack, rec, where)
        _check_replaces(rec, in_force, where)
        in_force[(rec.item, rec.question)] = rec
        out.append(rec)
    return out


def current_adjudications(
    records: list[AdjudicationRecord],
) -> dict[tuple[str, str], AdjudicationRecord]:
    """(item, question) → the record in force (the last one for it)."""
    return {(r.item, r.question): r for r in records}


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock beside the adjudication file, held for one append."""
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def append_adjudication(
    pack: Pack,
    *,
    item: str,
    question: str,
    category: str,
    grounds: str,
    adjudicator: str,
    raw: dict[str, str],
    replaces: int | None = None,
    clock: Callable[[], str] = utc_now_milli,
) -> AdjudicationRecord:
    """Append one record (checked as :func:`read_adjudications` checks the file). Grounds are
    one line, folded like rating grounds, and required."""
    text = normalise_ws(grounds)
    if not text:
        raise AdjudicationError(f"item {item}, {question}: grounds are required (one line)")
    path = adjudication_path(pack.path)
    try:
        with _locked(path):
            records = read_adjudications(pack)
            rec = AdjudicationRecord(
                pack_id=pack.manifest.pack_id,
                seq=len(records) + 1,
                item=item,
                question=question,
                category=category,
                grounds=text,
                adjudicator=adjudicator_actor(adjudicator),
                ts=clock(),
                replaces=replaces,
                raw=dict(raw),
            )
            where = f"item {item}, {question}"
            _check_record(pack, rec, where)
            _check_replaces(rec, current_adjudications(records), where)
            append_line_durable(path, (rec.model_dump_json() + "\n").encode("utf-8"))
    except OSError as err:
        raise StorageError(
            f"{path}: the adjudication of {item} {question} was not saved: {os_reason(err)}"
        ) from err
    return rec
