"""The rating domain: validation, verbatim quote checks, atomic saves, resume, revisions.

A :class:`RatingSession` is one rater working on one pack. It opens the manifest, the
items and ``ratings/NAME.jsonl`` for its own rater only — never another rater's file and
never the key. Every save rewrites the rater's file atomically (temp file, fsync,
rename) with the new record appended, so a crash loses at most the item being typed.
Saving an item again appends a revision; nothing is overwritten.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from curiosity_tui.atomic import atomic_write_bytes
from curiosity_tui.clock import utc_now_milli
from curiosity_tui.errors import InputError, StorageError, os_reason
from curiosity_tui.ledger.sampling_record import CallSampling
from curiosity_tui.packs.pack import RATINGS_DIR, Pack, PackItem, presentation_order
from curiosity_tui.packs.schemes import Question, Scheme
from curiosity_tui.provenance import Provenance
from curiosity_tui.provenance import current as current_provenance
from curiosity_tui.textfiles import utf8_lines

__all__ = [
    "MODEL_PREFIX",
    "ModelRating",
    "QuestionAnswer",
    "QuoteCheck",
    "RaterNameError",
    "RatingError",
    "RatingRecord",
    "RatingSession",
    "check_quote",
    "normalise_ws",
    "quote_length_problem",
    "rated_items",
    "rater_group",
    "ratings_path",
    "read_rater_file",
    "read_ratings",
    "rater_file_lock",
    "refuse_copied_records",
    "validate_answers",
    "validate_rater_name",
]

#: \A…\Z, not ^…$: "$" also matches before a trailing newline, and "alice\n" is not "alice".
#: A model rater is ``model:NAME`` (decision 235); a human name has no colon, so the two
#: groups can never share a name or a file.
_RATER_RE = re.compile(r"\A(?:model:)?[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
MODEL_PREFIX = "model:"
_WS_RE = re.compile(r"\s+")


class RatingError(InputError):
    """A rating cannot be saved as given (the message says what to fix)."""


class RaterNameError(InputError):
    pass


class QuestionAnswer(BaseModel):
    category: str
    grounds: str
    quotes: list[str] = Field(default_factory=list)


class ModelRating(BaseModel):
    """Who rated, for a model rater: the model and endpoint (never a key), how the reply
    came back, and how many calls it took (2 = one repair)."""

    model: str
    endpoint: str | None = Field(description="base URL without user, password or query")
    response_format: str | None = None
    calls: int = Field(ge=0)
    code: str | None = Field(default=None, description="failure code of a missing rating")
    sampling: CallSampling | None = Field(
        default=None, description="what the rating call was sent with (issue 23.1)"
    )


def parse_iso_ts(ts: str) -> str | None:
    """Why ``ts`` is not an ISO-8601 UTC time as the tools write it (``…Z``), or None."""
    try:
        ok = ts.endswith("Z") and datetime.fromisoformat(ts[:-1] + "+00:00") is not None
    except ValueError:
        ok = False
    return (
        None
        if ok
        else f"ts {ts[:40]!r} is not an ISO-8601 UTC time (like 2026-01-02T03:04:05.678Z)"
    )


class RatingRecord(BaseModel):
    #: a misspelt field (``items_sha265``) is refused, not dropped (issue 25, item 9)
    model_config = ConfigDict(extra="forbid")

    pack_id: str
    item: str
    rater: str
    revision: int = Field(ge=0, description="0 for the first rating of the item, then 1, 2 …")
    ts: str
    answers: dict[str, QuestionAnswer]
    missing: str | None = Field(
        default=None,
        description="a missing rating: why there is none (then answers is empty); agreement "
        "and completeness treat the item as unrated by this rater",
    )
    by_model: ModelRating | None = None
    items_sha256: str | None = Field(
        default=None,
        description="sha256 of the pack's items the rater saw; checked by `ratings import` "
        "(absent from records saved before exports existed)",
    )
    position: int | None = Field(
        default=None, ge=1, description="the item's place in this rater's presentation order"
    )
    order_seed: str | None = Field(
        default=None, description="the seed of this rater's order (None: one fixed order)"
    )
    shown_at: str | None = Field(
        default=None, description="when the item was first shown to the rater (the app)"
    )
    seconds_on_item: float | None = Field(
        default=None,
        ge=0,
        description="time on the item until this save, time away excluded where the app "
        "can tell (the terminal reports losing focus); None when not timed",
    )
    provenance: Provenance | None = Field(
        default=None,
        description="what saved the record (issue 23.3); absent from records saved before",
    )

    @field_validator("ts")
    @classmethod
    def _iso_ts(cls, ts: str) -> str:
        problem = parse_iso_ts(ts)
        if problem is not None:
            raise ValueError(problem)
        return ts

    @property
    def rated(self) -> bool:
        return self.missing is None and bool(self.answers)

    def line(self) -> str:
        """The record as one JSON line; unset optional fields are left out, so a human's
        record reads as it always has."""
        return self.model_dump_json(exclude_none=True) + "\n"


def rater_group(rater: str) -> str:
    """``model`` for a ``model:NAME`` rater, ``human`` for every other."""
    return "model" if rater.startswith(MODEL_PREFIX) else "human"


def validate_rater_name(name: str) -> str:
    """Rater names become file names: letters, digits, ``.``, ``_``, ``-``; no separators.
    ``model:NAME`` names a model rater (the same rules for NAME)."""
    if not isinstance(name, str) or not _RATER_RE.match(name) or name in (".", ".."):
        raise RaterNameError(
            f"invalid rater name {name!r}: use 1–64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (no path separators or spaces), or "
            "model:NAME for a model rater"
        )
    return name


def ratings_path(packdir: Path, rater: str) -> Path:
    return Path(packdir) / RATINGS_DIR / f"{validate_rater_name(rater)}.jsonl"


def normalise_ws(text: str) -> str:
    """Collapse every run of whitespace (spaces, tabs, newlines) to one space; strip ends."""
    return _WS_RE.sub(" ", text).strip()


@dataclass(frozen=True)
class QuoteCheck:
    ok: bool
    reason: str = ""
    section: int | None = None  # 1-based section the quote was found in


def _snippet(text: str, width: int = 24) -> str:
    text = text[:width]
    return text + ("…" if len(text) == width else "")


def check_quote(quote: str, sections: list[str]) -> QuoteCheck:
    """Does ``quote`` occur verbatim in one of the item's sections, after whitespace
    normalisation? On failure the reason names where the quote stops matching."""
    q = normalise_ws(quote)
    if not q:
        return QuoteCheck(False, "the quote is empty")
    norms = [normalise_ws(s) for s in sections]
    for i, s in enumerate(norms, start=1):
        if q in s:
            return QuoteCheck(True, "", i)
    # Longest prefix of the quote that occurs somewhere: occurrence is monotone in length.
    lo, hi = 0, len(q)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if any(q[:mid] in s for s in norms):
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return QuoteCheck(False, "not in the item: not even its first character occurs")
    prefix = q[:lo]
    where = next(i for i, s in enumerate(norms, start=1) if prefix in s)
    s = norms[where - 1]
    pos = s.index(prefix) + len(prefix)
    item_next = s[pos:]
    quote_next = q[lo:]
    tail = "the section ends there" if not item_next else f"the item reads {_snippet(item_next)!r}"
    return QuoteCheck(
        False,
        f"not verbatim in the item: the first {lo} characters match section {where}, "
        f"then the quote reads {_snippet(quote_next)!r} where {tail}",
        None,
    )


def quote_length_problem(quote: str, q: Question) -> str | None:
    """Why ``quote`` is too short for question ``q`` (its scheme sets the minimum), or None."""
    text = normalise_ws(quote)
    words = len(text.split())
    if len(text) < q.quote_min_chars or words < q.quote_min_words:
        return (
            f"too short: a quote needs at least {q.quote_min_chars} characters and "
            f"{q.quote_min_words} words (this one has {len(text)} and {words})"
        )
    return None


def validate_answers(
    scheme: Scheme, item: PackItem, answers: Mapping[str, QuestionAnswer | Mapping[str, object]]
) -> dict[str, QuestionAnswer]:
    """Check every question is answered per the scheme; return the cleaned answers.

    Raises :class:`RatingError` naming the first problem."""
    clean: dict[str, QuestionAnswer] = {}
    extra = set(answers) - {q.id for q in scheme.questions}
    if extra:
        raise RatingError(f"item {item.id}: unknown question(s) {sorted(extra)}")
    for q in scheme.questions:
        raw = answers.get(q.id)
        if raw is None:
            raise RatingError(f"item {item.id}, {q.id}: no category chosen")
        ans = raw if isinstance(raw, QuestionAnswer) else QuestionAnswer.model_validate(raw)
        clean[q.id] = _validate_one(q, item, ans)
    return clean


def _validate_one(q: Question, item: PackItem, ans: QuestionAnswer) -> QuestionAnswer:
    if ans.category not in q.category_ids:
        raise RatingError(
            f"item {item.id}, {q.id}: {ans.category!r} is not one of {q.category_ids}"
        )
    grounds = normalise_ws(ans.grounds)
    if q.grounds_required and not grounds:
        raise RatingError(f"item {item.id}, {q.id}: grounds are required (one line)")
    quotes = [normalise_ws(x) for x in ans.quotes if normalise_ws(x)]
    if len(quotes) > q.max_quotes:
        raise RatingError(
            f"item {item.id}, {q.id}: {len(quotes)} quotes given, at most {q.max_quotes} allowed"
        )
    if len(quotes) < q.min_quotes:
        raise RatingError(f"item {item.id}, {q.id}: at least {q.min_quotes} quote(s) required")
    if len(set(quotes)) != len(quotes):
        raise RatingError(f"item {item.id}, {q.id}: the same quote is given twice")
    for i, quote in enumerate(quotes, start=1):
        short = quote_length_problem(quote, q)
        if short:
            raise RatingError(f"item {item.id}, {q.id}, quote {i}: {short}")
        chk = check_quote(quote, item.sections)
        if not chk.ok:
            raise RatingError(f"item {item.id}, {q.id}, quote {i}: {chk.reason}")
    return QuestionAnswer(category=ans.category, grounds=grounds, quotes=quotes)


def _numbered(path: Path) -> list[tuple[int, RatingRecord]]:
    """(line number, record) for every record in one rater's file. A damaged line, or a file
    that is not UTF-8, is an error naming it."""
    if not path.exists():
        return []
    out: list[tuple[int, RatingRecord]] = []
    for lineno, line in utf8_lines(path, RatingError):
        if not line.strip():
            continue
        try:
            out.append((lineno, RatingRecord.model_validate_json(line)))
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(x) for x in first["loc"])
            where = f" ({loc})" if loc else ""
            raise RatingError(
                f"{path}:{lineno}: damaged rating record{where}: {first['msg']}"
            ) from err
    return out


def read_ratings(path: Path) -> list[RatingRecord]:
    """All records in one rater's file, in order. A damaged line is an error naming it."""
    return [rec for _, rec in _numbered(path)]


def read_rater_file(path: Path, rater: str, pack_id: str | None = None) -> list[RatingRecord]:
    """One rater's records, refused with the file and line when a record names another
    rater or pack, or repeats an (item, revision) already in the file: a copied or
    concatenated file cannot pass for this rater's own."""
    seen: dict[tuple[str, int], int] = {}
    out: list[RatingRecord] = []
    for lineno, rec in _numbered(path):
        if rec.rater != rater:
            raise RatingError(
                f"{path}:{lineno}: the record names rater {rec.rater!r}, but this is "
                f"{rater!r}'s file: a copy of another rater's ratings is not a rater"
            )
        if pack_id is not None and rec.pack_id != pack_id:
            raise RatingError(
                f"{path}:{lineno}: the record is for pack {rec.pack_id!r}, not {pack_id!r}"
            )
        key = (rec.item, rec.revision)
        if key in seen:
            raise RatingError(
                f"{path}:{lineno}: duplicate record: item {rec.item} revision {rec.revision} "
                f"is already on line {seen[key]}"
            )
        seen[key] = lineno
        out.append(rec)
    return out


def refuse_copied_records(files: Mapping[str, tuple[Path, list[RatingRecord]]]) -> None:
    """Refuse when two raters' files hold the same record (item, time and answers): one
    rater's work saved under two names. ``files``: rater -> (path, records in file order)."""
    first: dict[str, tuple[str, Path, int]] = {}
    for rater, (path, records) in sorted(files.items()):
        for n, rec in enumerate(records, start=1):
            body = rec.model_dump_json(include={"item", "ts", "answers"})
            if body in first and first[body][0] != rater:
                other, opath, on = first[body]
                raise RatingError(
                    f"{path}: record {n} (item {rec.item}) is the same record as {opath} "
                    f"record {on} (rater {other!r}): one rater's ratings under two names"
                )
            first.setdefault(body, (rater, path, n))
    _refuse_retimed_copies(files)


#: characters of distinct grounds a file must hold before identical prose can only be a copy
#: (boilerplate repeated on every item, as test fixtures write, does not count twice)
COPY_PROSE_CHARS = 200


def _content(records: list[RatingRecord]) -> tuple[tuple[str, int, str], ...]:
    """A file's records as content: item, revision and answers; no times, no rater."""
    return tuple(
        (r.item, r.revision, json.dumps({q: a.model_dump() for q, a in r.answers.items()}))
        for r in records
    )


def _refuse_retimed_copies(files: Mapping[str, tuple[Path, list[RatingRecord]]]) -> None:
    """Refuse two raters' files with the same records in the same order, timestamps aside,
    once they hold enough written grounds that identical prose cannot be chance (a copy with
    every ``ts`` shifted by 1 ms passed the record-by-record check; decision 406)."""
    seen: dict[tuple[tuple[str, int, str], ...], tuple[str, Path]] = {}
    for rater, (path, records) in sorted(files.items()):
        prose = sum(map(len, {a.grounds for r in records for a in r.answers.values()}))
        if prose < COPY_PROSE_CHARS:
            continue
        key = _content(records)
        if key in seen:
            other, opath = seen[key]
            raise RatingError(
                f"{path}: its {len(records)} records are those of {opath} (rater {other!r}) "
                "with other timestamps: one rater's ratings under two names"
            )
        seen[key] = (rater, path)


def latest_by_item(records: Iterable[RatingRecord]) -> dict[str, RatingRecord]:
    """One rater's latest revision of each item (the last record for it in file order), in
    the order the items were first rated. A missing rating (a model's reply that failed)
    stands only until a real rating follows it; it never replaces one."""
    out: dict[str, RatingRecord] = {}
    for rec in records:
        if rec.rated or rec.item not in out or not out[rec.item].rated:
            out[rec.item] = rec
    return out


def rated_items(records: Iterable[RatingRecord]) -> dict[str, RatingRecord]:
    """The latest revision of each item that has a real rating (missing ratings left out)."""
    return {i: r for i, r in latest_by_item(records).items() if r.rated}


@contextmanager
def rater_file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock beside the rater's file, held for one save."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class RatingSession:
    """One rater on one pack: progress, resume, save, revise."""

    def __init__(self, packdir: str | Path, rater: str, *, clock=utc_now_milli) -> None:  # type: ignore[no-untyped-def]
        self.rater = validate_rater_name(rater)
        self.pack = Pack.open(packdir)
        export = self.pack.export
        if export is not None and export.rater != self.rater:
            raise RatingError(
                f"{self.pack.path}: this copy of the pack was exported for rater "
                f"{export.rater!r}, not {self.rater!r}"
            )
        self.path = ratings_path(self.pack.path, self.rater)
        self.clock = clock
        self._order, self.order_seed = presentation_order(self.pack.manifest, self.rater)
        self.records: list[RatingRecord] = read_rater_file(
            self.path, self.rater, self.pack.manifest.pack_id
        )

    # -- reading ---------------------------------------------------------------
    @property
    def scheme(self) -> Scheme:
        return self.pack.scheme

    @property
    def order(self) -> list[str]:
        """The items in the order this rater sees them (decision 427)."""
        return self._order

    @property
    def n(self) -> int:
        return len(self.order)

    def latest(self) -> dict[str, RatingRecord]:
        return latest_by_item(self.records)

    def history(self, item_id: str) -> list[RatingRecord]:
        return [r for r in self.records if r.item == item_id]

    def done(self) -> int:
        latest = rated_items(self.records)
        return sum(1 for i in self.order if i in latest)

    def resume_index(self) -> int:
        """Index of the first unrated item in pack order; the last item if all are rated."""
        latest = rated_items(self.records)
        for idx, item_id in enumerate(self.order):
            if item_id not in latest:
                return idx
        return max(0, self.n - 1)

    def complete(self) -> bool:
        return self.done() == self.n

    # -- writing ---------------------------------------------------------------
    def save(
        self,
        item_id: str,
        answers: Mapping[str, QuestionAnswer | Mapping[str, object]],
        *,
        by_model: ModelRating | None = None,
        timing: tuple[str, float] | None = None,
    ) -> RatingRecord:
        """Save a rating; ``timing`` = (first shown, seconds on the item) from the app."""
        item = self.pack.item(item_id)
        clean = validate_answers(self.scheme, item, answers)
        return self._store(item_id, clean, None, by_model, timing)

    def save_missing(self, item_id: str, reason: str, by_model: ModelRating) -> RatingRecord:
        """Record that this (model) rater has no rating of the item, and why."""
        self.pack.item(item_id)
        return self._store(item_id, {}, reason.strip() or "no reason given", by_model)

    def _store(
        self,
        item_id: str,
        clean: dict[str, QuestionAnswer],
        missing: str | None,
        by_model: ModelRating | None,
        timing: tuple[str, float] | None = None,
    ) -> RatingRecord:
        try:
            return self._append(item_id, clean, missing, by_model, timing)
        except OSError as err:  # disk full, read-only pack folder: the file is as it was
            raise StorageError(
                f"{self.path}: the rating of item {item_id} was not saved: {os_reason(err)}"
            ) from err

    def _append(
        self,
        item_id: str,
        clean: dict[str, QuestionAnswer],
        missing: str | None = None,
        by_model: ModelRating | None = None,
        timing: tuple[str, float] | None = None,
    ) -> RatingRecord:
        with rater_file_lock(self.path):
            # another window of the same rater may have saved
            on_disk = read_rater_file(self.path, self.rater, self.pack.manifest.pack_id)
            revision = sum(1 for r in on_disk if r.item == item_id)
            rec = RatingRecord(
                pack_id=self.pack.manifest.pack_id,
                item=item_id,
                rater=self.rater,
                revision=revision,
                ts=self.clock(),
                answers=clean,
                missing=missing,
                by_model=by_model,
                items_sha256=self.pack.manifest.items_sha256,
                position=self._order.index(item_id) + 1,
                order_seed=self.order_seed,
                shown_at=timing[0] if timing else None,
                seconds_on_item=round(timing[1], 3) if timing else None,
                provenance=current_provenance(),
            )
            body = "".join(r.line() for r in [*on_disk, rec])
            atomic_write_bytes(self.path, body.encode("utf-8"))
            self.records = [*on_disk, rec]
        return rec
