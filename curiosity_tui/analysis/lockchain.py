"""The pre-registration lock chain (S7): locking a plan, reading, verifying.

``prereg lock`` appends ``{seq, ts, stage, reason, plan_sha256, plan_text, prev, hash}`` to
an append-only, sha256-chained ``prereg.jsonl``; ``hash`` = sha256(prev + canonical JSON
of the entry without ``hash``). Stages move forward only; amendments append with a
reason and never replace.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from curiosity_tui.analysis.plan import PlanError, load_plan
from curiosity_tui.analysis.registry import Registry
from curiosity_tui.analysis.runstamps import RunStamp, earliest, scan_stamps
from curiosity_tui.atomic import append_line_durable
from curiosity_tui.clock import utc_now_seconds
from curiosity_tui.errors import InputError
from curiosity_tui.provenance import Provenance
from curiosity_tui.provenance import current_dict as current_provenance_dict
from curiosity_tui.textfiles import utf8_lines

CHAIN_FILE = "prereg.jsonl"
GENESIS = "0" * 64
#: \A…\Z, not ^…$: "before-runs\n" is not a stage
STAGE_RE = re.compile(
    r"\A(before-runs|after-shakeout|after-mechanical-results|after-rater-[1-9][0-9]*|after-key)\Z"
)
STAGES_HELP = "before-runs, after-shakeout, after-mechanical-results, after-rater-N, after-key"


class ChainError(InputError):
    """A prereg chain that is broken, or a lock that may not be appended."""


class NotRegisteredError(InputError):
    """A run requested without a lock at stage before-runs."""


class LockEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seq: int
    ts: str
    stage: str
    reason: str
    plan_sha256: str
    plan_text: str
    prev: str
    hash: str
    #: the plan's design analysis (``plan power --out``), locked with it; absent (None) on
    #: entries without one, and then left out of the hashed body (decision 426)
    design: dict[str, Any] | None = None
    #: what wrote the entry (issue 23.3); in the hashed content, left out while unset so that
    #: entries written before it hash as they did
    provenance: Provenance | None = None

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("provenance", 0) is None:
            del out["provenance"]
        return out

    def short(self) -> str:
        return self.hash[:12]


class ChainReport(BaseModel):
    path: str
    ok: bool
    entries: int
    first_bad_seq: int | None = None
    problem: str = ""
    #: runs found beside the chain and checked against it (``prereg verify``)
    runs_checked: int = 0
    chronology_problems: list[str] = Field(default_factory=list)
    #: runs re-created after the pilot that ran them finished (notes: the reviewer decides)
    run_notes: list[str] = Field(default_factory=list)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_hash(fields: dict[str, Any]) -> str:
    body = {k: v for k, v in fields.items() if k != "hash" and not (k == "design" and v is None)}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((body["prev"] + canonical).encode("utf-8")).hexdigest()


def stage_rank(stage: str) -> tuple[int, int]:
    if not STAGE_RE.match(stage):
        raise ChainError(f"unknown stage {stage!r}; stages are {STAGES_HELP}")
    if stage.startswith("after-rater-"):
        return (3, int(stage.rsplit("-", 1)[1]))
    order = {"before-runs": 0, "after-shakeout": 1, "after-mechanical-results": 2, "after-key": 4}
    return (order[stage], 0)


def read_chain(path: Path) -> list[LockEntry]:
    """Parse every line; :class:`ChainError` names the line that is not an entry."""
    path = Path(path)
    if not path.exists():
        return []
    entries: list[LockEntry] = []
    for lineno, line in utf8_lines(path, ChainError):
        if not line.strip():
            continue
        try:
            entries.append(LockEntry.model_validate_json(line))
        except ValidationError as err:
            raise ChainError(
                f"{path}:{lineno}: not a prereg entry: {err.errors()[0]['msg']}"
            ) from None
    return entries


def check_entries(entries: list[LockEntry]) -> tuple[int | None, str]:
    """(first bad seq, problem) or (None, "")."""
    prev = GENESIS
    last_rank = (-1, 0)
    for i, e in enumerate(entries, start=1):
        if e.seq != i:
            return e.seq, f"seq {e.seq} where {i} was expected (a gap or reordering)"
        if e.prev != prev:
            return e.seq, "prev does not match the previous entry's hash"
        if entry_hash(e.model_dump()) != e.hash:
            return e.seq, "hash does not match the entry's content (edited after it was written)"
        if sha256_text(e.plan_text) != e.plan_sha256:
            return e.seq, "plan_sha256 does not match plan_text"
        try:
            rank = stage_rank(e.stage)
        except ChainError as err:
            return e.seq, str(err)
        if rank < last_rank:
            return e.seq, f"stage {e.stage!r} goes back in time"
        last_rank, prev = rank, e.hash
    return None, ""


def verify_chain(path: Path) -> ChainReport:
    path = Path(path)
    try:
        entries = read_chain(path)
    except ChainError as err:
        return ChainReport(path=str(path), ok=False, entries=0, problem=str(err))
    bad, problem = check_entries(entries)
    return ChainReport(
        path=str(path), ok=bad is None, entries=len(entries), first_bad_seq=bad, problem=problem
    )


def load_verified_chain(path: Path) -> list[LockEntry]:
    entries = read_chain(path)
    bad, problem = check_entries(entries)
    if bad is not None:
        raise ChainError(f"{path}: seq {bad}: {problem}")
    return entries


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - non-POSIX
            pass
        yield
    finally:
        os.close(fd)


def lock(
    plan_path: Path,
    stage: str,
    *,
    chain_path: Path | None = None,
    reason: str = "",
    registry: Registry | None = None,
    ts: str | None = None,
    runs_dir: Path | None = None,
    warn_only: bool = False,
    design: Path | None = None,
) -> LockEntry:
    """Validate the plan and append it to the chain. Returns the new entry.

    Refused when the stage is earlier than the chain's, or no later than the runs that
    already exist (in ``runs_dir``, default the chain's directory): ``before-runs`` after
    any run, or a stage the existing runs were already created under."""
    from curiosity_tui.analysis.plan_checks import refuse_unproducible

    plan_path = Path(plan_path)
    stage_rank(stage)
    plan, text = load_plan(plan_path, registry=registry)  # refuses open rules, unknown names
    if not warn_only:  # the plan must be able to produce its pack and metrics (decision 441)
        refuse_unproducible(plan, str(plan_path), base=plan_path.parent)
    if len(plan.comparisons) >= 2 and plan.family is None:
        raise PlanError(
            f"{plan_path}: {len(plan.comparisons)} [[comparisons]] and no family: declare how "
            'they are read as a family (family = "none", "holm", "bonferroni" or "bh")'
        )
    analysis = _read_design(Path(design), plan.name) if design is not None else None
    chain_path = Path(chain_path) if chain_path else plan_path.parent / CHAIN_FILE
    with _locked(chain_path):
        entries = load_verified_chain(chain_path)
        refuse_after_runs(stage, scan_stamps(Path(runs_dir) if runs_dir else chain_path.parent))
        refuse_amendment(entries, stage, reason, sha256_text(text), chain_path)
        prev = entries[-1].hash if entries else GENESIS
        fields: dict[str, Any] = {
            "seq": len(entries) + 1,
            "ts": ts or utc_now_seconds(),
            "stage": stage,
            "reason": reason.strip(),
            "plan_sha256": sha256_text(text),
            "plan_text": text,
            "prev": prev,
            "hash": "",
            "provenance": current_provenance_dict(),
        }
        if analysis is not None:
            fields["design"] = analysis
        fields["hash"] = entry_hash(fields)
        entry = LockEntry.model_validate(fields)
        dumped = entry.model_dump(exclude={"design"} if analysis is None else None)
        line = json.dumps(dumped, ensure_ascii=False, sort_keys=True) + "\n"
        append_line_durable(chain_path, line.encode("utf-8"))
    return entry


def refuse_amendment(
    entries: list[LockEntry], stage: str, reason: str, plan_sha256: str, chain_path: Path
) -> None:
    """:class:`ChainError` when a lock after ``entries`` would go back a stage, amend
    without a reason, or repeat the last lock."""
    if not entries:
        return
    last = entries[-1]
    if stage_rank(stage) < stage_rank(last.stage):
        raise ChainError(
            f"{chain_path}: stage {stage!r} would go back in time: seq {last.seq} is "
            f"already at {last.stage!r}; stages only move forward"
        )
    if not reason.strip():
        raise ChainError(
            f"{chain_path}: an amendment (seq {last.seq + 1}) needs --reason: "
            "say what changed and what was known when it changed"
        )
    if last.stage == stage and last.plan_sha256 == plan_sha256:
        raise ChainError(f"{chain_path}: this plan is already locked at {stage!r} (seq {last.seq})")


def _read_design(path: Path, plan_name: str) -> dict[str, Any]:
    """A design analysis written by ``plan power --out`` for this plan, as a JSON object."""
    from curiosity_tui.analysis.power import DesignAnalysis

    try:
        da = DesignAnalysis.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise PlanError(f"{path}: cannot read the design analysis: {err.strerror}") from err
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise PlanError(f"{path}: not a design analysis: {where}: {first['msg']}") from None
    if da.plan != plan_name:
        raise PlanError(f"{path}: a design analysis of plan {da.plan!r}, not {plan_name!r}")
    return da.model_dump(mode="json")


def refuse_after_runs(stage: str, stamps: list[RunStamp]) -> None:
    """:class:`ChainError` if a lock at ``stage`` made now would claim to precede runs that
    already exist: ``before-runs`` once any run exists, or any stage no later than one the
    existing runs recorded."""
    if not stamps:
        return
    first = earliest(stamps)
    seen = f"{len(stamps)} run(s) exist already" + (
        f" (first: {first[0].run_id}, created {first[0].created_at})" if first else ""
    )
    if stage == "before-runs":
        raise ChainError(
            f"stage 'before-runs' refused: {seen}; a lock made now comes after them. "
            "Lock a change as an amendment at a later stage with --reason (it is reported as "
            "an amendment, never as the verdict)"
        )
    recorded = [
        (stage_rank(s.lock.stage), s.lock.stage, s.lock.seq, s.run_id)
        for s in stamps
        if s.lock is not None and s.lock.stage and STAGE_RE.match(s.lock.stage)
    ]
    if not recorded:
        return
    rank, top_stage, seq, run_id = max(recorded, key=lambda t: t[0])
    if stage_rank(stage) <= rank:
        raise ChainError(
            f"stage {stage!r} refused: run {run_id} was already created under a lock at "
            f"stage {top_stage!r} (seq {seq}); a lock made now must be at a later stage"
        )


def find_chain(run_dir: Path) -> Path | None:
    """``prereg.jsonl`` in ``run_dir`` or its parent (a ledger dir inside a pilot dir), or in
    the study folder two levels up (``STUDY/runs/<pilot>``, decision 445)."""
    from curiosity_tui.analysis.study import is_study

    run_dir = Path(run_dir)
    if run_dir.is_file() and run_dir.name == CHAIN_FILE:
        return run_dir
    for d in (run_dir, run_dir.parent):
        if (d / CHAIN_FILE).is_file():
            return d / CHAIN_FILE
    for study in (run_dir.parent.parent, run_dir.parent.parent.parent):
        if is_study(study) and (study / CHAIN_FILE).is_file():
            return study / CHAIN_FILE
    return None


def require_lock(
    run_dir: Path, *, chain_path: Path | None = None, plan_text: str | None = None
) -> LockEntry:
    """The governing (latest) lock entry, provided the chain verifies and holds a lock at
    stage ``before-runs``. ``pilot run`` calls this unless ``--unregistered``.

    With ``plan_text`` (the plan file about to be run), also refuses when that text is not
    the governing plan: running an edited, unlocked plan under an old lock would be a
    silent amendment."""
    path = Path(chain_path) if chain_path else find_chain(Path(run_dir))
    if path is None or not path.is_file():
        raise NotRegisteredError(
            f"{run_dir}: no {CHAIN_FILE} here: lock a plan first "
            f"(`curiosity-tui prereg lock PLAN.toml --stage before-runs --chain "
            f"{Path(run_dir) / CHAIN_FILE}`) or pass --unregistered"
        )
    entries = load_verified_chain(path)
    if not any(e.stage == "before-runs" for e in entries):
        raise NotRegisteredError(
            f"{path}: no lock at stage before-runs (stages present: "
            f"{', '.join(e.stage for e in entries) or 'none'}); pass --unregistered to run anyway"
        )
    latest = entries[-1]
    if plan_text is not None and sha256_text(plan_text) != latest.plan_sha256:
        raise NotRegisteredError(
            f"{path}: the plan to run differs from the locked plan (seq {latest.seq}, stage "
            f"{latest.stage}); lock the change as an amendment with --reason, or restore the "
            "locked text (`curiosity-tui prereg show --plan SEQ`)"
        )
    return latest


def lock_metadata(entry: LockEntry | None) -> dict[str, Any]:
    """What a run records about its registration (for RunMeta.options)."""
    if entry is None:
        return {"prereg": None, "unregistered": True}
    return {
        "prereg": {
            "seq": entry.seq,
            "stage": entry.stage,
            "hash": entry.hash,
            "plan_sha256": entry.plan_sha256,
        },
        "unregistered": False,
    }


def format_chronology(entries: list[LockEntry]) -> str:
    if not entries:
        return "no locks"
    lines = ["seq  ts                    stage                      hash          plan"]
    for e in entries:
        lines.append(
            f"{e.seq:<4} {e.ts:<21} {e.stage:<26} {e.short()}  {e.plan_sha256[:12]}"
            + ("  (plan unchanged)" if e.seq > 1 and _same_plan(entries, e) else "")
        )
        if e.reason:
            lines.append(f"     reason: {e.reason}")
    return "\n".join(lines)


def _same_plan(entries: list[LockEntry], e: LockEntry) -> bool:
    return entries[e.seq - 2].plan_sha256 == e.plan_sha256


def plan_diffs(entries: list[LockEntry]) -> str:
    """Unified diffs of the plan text between consecutive locks where it changed."""
    import difflib

    out: list[str] = []
    for prev, cur in zip(entries, entries[1:], strict=False):
        if prev.plan_sha256 == cur.plan_sha256:
            continue
        out.append(f"seq {prev.seq} ({prev.stage}) → seq {cur.seq} ({cur.stage}): {cur.reason}")
        out.extend(
            line.rstrip("\n")
            for line in difflib.unified_diff(
                prev.plan_text.splitlines(keepends=True),
                cur.plan_text.splitlines(keepends=True),
                fromfile=f"seq {prev.seq}",
                tofile=f"seq {cur.seq}",
            )
        )
        out.append("")
    return "\n".join(out) if out else "the plan text never changed"
