"""A study at a glance (issue 28, item 1; decision 570): the workspace's one row per study.

A study is found where its plan or its chain is (:func:`find_studies`): a study folder
(``plan.toml`` and ``runs/``, decision 445), or — the README's own layout — a pilot folder
``runs/<name>/`` holding its ``prereg.jsonl`` (the plan is then the chain's last entry), or
the folder opened when it holds a chain itself.

Two passes, as the workspace shows them: :func:`summarize_study` is cheap (the plan, the
chain's hashes, the run ledgers the workspace scan already read, the packs' rating files) and
is painted with the scan; :func:`check_study` replays the runs (``prereg verify`` and the
verdict) and fills in its two cells afterwards. Nothing here writes, and nothing imports
Textual; the plan, chain and verdict modules load on first use (the workspace screen imports
this module, and opening the app loads no numpy).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from curiosity_tui.analysis.study import PLAN_FILE, RUNS_DIR, is_study
from curiosity_tui.errors import CuriosityError
from curiosity_tui.workspace_scan import LedgerSummary, PackSummary

if TYPE_CHECKING:
    from curiosity_tui.analysis.plan import PilotPlan

__all__ = [
    "ArmProgress",
    "PackProgress",
    "StudyPlace",
    "StudyState",
    "check_study",
    "find_studies",
    "summarize_study",
]

PACKS_DIR = "packs"
PENDING = "…"
CHAIN_FILE = "prereg.jsonl"  # analysis/lockchain.py's, without loading it
PRACTICE = "practice · "  # the verdict cell over scripted runs (decision 442)


@dataclass(frozen=True)
class StudyPlace:
    """Where a study's parts are: its folder, plan file (None: the chain holds the plan),
    chain (None: not locked yet), runs and packs folders."""

    folder: Path
    plan: Path | None
    chain: Path | None
    runs: Path
    packs: Path | None


@dataclass
class ArmProgress:
    arm: str
    done: int  # runs with every planned session committed
    started: int  # runs with a ledger (done or not)
    planned: int


@dataclass
class PackProgress:
    name: str
    path: Path
    items: int
    rated: dict[str, int]  # rater -> items rated (latest revision, missing ratings left out)
    expected: list[str]
    min_raters: int
    scripted: bool

    def text(self) -> str:
        """``p1: ann 4/4, bob 1/4`` — raters expected but silent show ``0/N``."""
        raters = dict.fromkeys(self.expected, 0) | self.rated
        if not raters:
            need = f" ({self.min_raters} raters needed)" if self.min_raters else ""
            return f"{self.name}: nobody yet{need}"
        return f"{self.name}: " + ", ".join(f"{r} {n}/{self.items}" for r, n in raters.items())


@dataclass
class StudyState:
    name: str
    place: StudyPlace
    lock: str = "not locked"
    locked: bool = False
    arms: list[ArmProgress] = field(default_factory=list)
    packs: list[PackProgress] = field(default_factory=list)
    runs: list[Path] = field(default_factory=list)  # the study's ledger folders
    scripted: bool = False  # any of its runs has scripted replies (practice)
    verify: str = PENDING  # filled in by check_study
    verdict: str = PENDING
    error: str | None = None  # the plan could not be read: one line why

    def arms_text(self) -> str:
        return " · ".join(f"{a.arm} {a.done}/{a.planned}" for a in self.arms) or "no plan"

    def packs_text(self) -> str:
        return " · ".join(p.text() for p in self.packs) or "no packs"

    def owns(self, path: Path) -> bool:
        """Whether a ledger or pack folder belongs to this study (the workspace's filter)."""
        p = Path(path)
        return p in self.runs or any(p == k.path for k in self.packs)


def find_studies(root: Path) -> list[StudyPlace]:
    """Every study the workspace ``root`` shows as a row (see the module's text)."""
    root = Path(root)
    packs = root / PACKS_DIR if (root / PACKS_DIR).is_dir() else None
    if is_study(root):
        chain = root / CHAIN_FILE
        return [
            StudyPlace(
                root, root / PLAN_FILE, chain if chain.is_file() else None, root / RUNS_DIR, packs
            )
        ]
    out: list[StudyPlace] = []
    if (root / CHAIN_FILE).is_file():
        out.append(StudyPlace(root, None, root / CHAIN_FILE, root, None))
    runs = root / RUNS_DIR
    try:
        pilots = sorted(p for p in runs.iterdir() if (p / CHAIN_FILE).is_file())
    except OSError:
        pilots = []
    out.extend(StudyPlace(p, None, p / CHAIN_FILE, p, packs) for p in pilots)
    return out


def _under(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def _plan_of(place: StudyPlace, state: StudyState) -> PilotPlan | None:
    """The study's plan (its file, else the chain's last entry) and the lock cell."""
    from curiosity_tui.analysis.lockchain import read_chain, sha256_text, verify_chain
    from curiosity_tui.analysis.plan import load_plan, parse_plan

    text: str | None = None
    plan: PilotPlan | None = None
    try:
        if place.plan is not None:
            plan, text = load_plan(place.plan)
        if place.chain is not None:
            rep = verify_chain(place.chain)
            if not rep.ok:
                state.lock = f"chain BROKEN at seq {rep.first_bad_seq}"
                return plan
            entries = read_chain(place.chain)
            if entries:
                last = entries[-1]
                if plan is None:
                    text = last.plan_text
                    plan = parse_plan(text, source=f"{place.chain} seq {last.seq}")
                state.locked = sha256_text(text or "") == last.plan_sha256
                state.lock = (
                    f"locked seq {last.seq} ({last.stage})"
                    if state.locked
                    else f"plan edited after seq {last.seq}"
                )
    except CuriosityError as err:
        state.error = str(err).splitlines()[0] if str(err) else type(err).__name__
    return plan


def _arms(plan: PilotPlan, ledgers: list[LedgerSummary]) -> list[ArmProgress]:
    """Runs done / planned per arm (a cell ``config@contract`` on a contract axis): run
    names are ``<arm>-r<i>``, or ``<config>-<contract slug>-r<i>`` (runs/runner.py)."""
    from curiosity_tui.workspace_scan import contract_label

    out = []
    for cell in plan.cells():
        config, _, contract = cell.partition("@")
        prefix = f"{config}-{contract_label(contract)}" if contract else config
        pattern = re.compile(re.escape(prefix) + r"-r\d+")
        mine = [s for s in ledgers if pattern.fullmatch(s.name) and not s.error]
        done = sum(1 for s in mine if s.sessions >= plan.sessions)
        out.append(ArmProgress(cell, done, len(mine), plan.runs))
    return out


def _pack_progress(p: PackSummary) -> PackProgress:
    from curiosity_tui.packs.rating import RatingError, rated_items, read_ratings

    rated: dict[str, int] = {}
    for rater in p.raters:
        try:
            rated[rater] = len(rated_items(read_ratings(p.path / "ratings" / f"{rater}.jsonl")))
        except (RatingError, OSError, ValueError):
            rated[rater] = 0
    min_raters = 0
    try:
        manifest = json.loads((p.path / "manifest.json").read_text(encoding="utf-8"))
        min_raters = int(manifest.get("min_raters") or 0)
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    return PackProgress(p.name, p.path, p.items, rated, p.expected_raters, min_raters, p.scripted)


def summarize_study(
    place: StudyPlace, ledgers: list[LedgerSummary], packs: list[PackSummary]
) -> StudyState:
    """The cheap part of a study's row, from the workspace scan's ledgers and packs."""
    state = StudyState(name=place.folder.name, place=place)
    plan = _plan_of(place, state)
    mine = [s for s in ledgers if _under(s.path, place.runs)]
    state.runs = [s.path for s in mine]
    state.scripted = any(s.scripted for s in mine)
    if plan is not None:
        state.name = plan.name
        state.arms = _arms(plan, mine)
    if place.packs is not None:
        state.packs = [_pack_progress(p) for p in packs if _under(p.path, place.packs)]
    if place.chain is None:
        state.verify, state.verdict = "—", "not computable: not locked"
    elif state.error or not state.runs:
        state.verify = "—"
        state.verdict = f"not computable: {state.error or 'no runs yet'}"
    return state


def check_study(state: StudyState) -> tuple[str, str]:
    """(verify cell, verdict cell) — the slow part: ``prereg verify`` of the chain against
    the runs, and the verdict (``practice · MET`` over scripted runs; ``not computable: …``
    with the verdict's own one line when it refuses)."""
    from curiosity_tui.analysis.chronology import verify_chain_and_runs
    from curiosity_tui.analysis.verdict import verdict_for_dir

    place = state.place
    if place.chain is None or not state.runs:
        return state.verify, state.verdict
    try:
        rep = verify_chain_and_runs(place.chain, runs_dir=place.runs)
        verify = f"verified ({rep.runs_checked} runs)" if rep.ok else f"BROKEN: {rep.problem}"
    except (CuriosityError, OSError, ValueError) as err:
        verify = f"not verified: {_line(err)}"
    try:
        v = verdict_for_dir(place.folder)
        word = v.verdict.outcome.replace("_", " ").upper()
        verdict = PRACTICE + word if v.replies == "scripted" else word
    except (CuriosityError, OSError, ValueError) as err:
        verdict = f"not computable: {_line(err)}"
    return verify, verdict


def _line(err: BaseException) -> str:
    text = str(err).splitlines()
    return text[0] if text else type(err).__name__
