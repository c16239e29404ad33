"""The workspace shows a study as one row (issue 28, item 1; decision 570): plan name, lock
state, verify state, runs done/planned per arm, packs and their rating progress per rater,
verdict state (not computable / MET / NOT MET / practice) — computed in the domain
(analysis/study_state.py), shown by the workspace screen; Enter on the row lists only the
study's runs and packs, and they open from there. The README's own layout (``runs/p2`` with
its chain, ``packs/…``) is a study too. ``audit`` takes the study folder."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from curiosity_tui import workspace_scan
from curiosity_tui.analysis.study_state import (
    PRACTICE,
    check_study,
    find_studies,
    summarize_study,
)
from curiosity_tui.app import make_app
from curiosity_tui.cli import main
from curiosity_tui.packs.rating import RatingSession
from tests.keyburst import burst

ROOT = Path(__file__).resolve().parents[1]
EXTRA = ROOT / "ledgers" / "example-C+cur-pilot02"


def _small_plan(plan: Path) -> None:
    text = plan.read_text().replace("runs = 3", "runs = 1").replace("sessions = 5", "sessions = 2")
    plan.write_text(text)


def _pilot(plan: Path, out: Path) -> None:
    assert main(["pilot", "run", str(plan), "--out", str(out), "--scripted", "--workers", "1"]) == 0


def _pack(runs: Path, out: Path, key: Path) -> None:
    assert main(["pack", "build", str(runs), "--out", str(out), "--key-out", str(key),
                 "--scheme", "pilot-01", "--seed", "1", "--leak-permutations", "20",
                 "--raters", "ann,bob"]) == 0  # fmt: skip


def _rate(pack: Path, rater: str, items: int) -> None:
    s = RatingSession(pack, rater)
    for k, item in enumerate(s.order[:items]):
        s.save(
            item,
            {
                "q1": {"category": "built", "grounds": f"{rater} {k}"},
                "q2": {"category": "none", "grounds": "g"},
            },
        )


@pytest.fixture(scope="module")
def study(home: Path) -> Path:
    """``study init`` → lock → a scripted pilot → a pack rated by ann (2 items)."""
    root = home / "s1"
    assert main(["study", "init", str(root)]) == 0
    _small_plan(root / "plan.toml")
    assert main(["prereg", "lock", str(root / "plan.toml"), "--stage", "before-runs"]) == 0
    _pilot(root / "plan.toml", root / "runs" / "p1")
    _pack(root / "runs" / "p1", root / "packs" / "p1", root / "keys" / "p1.key.json")
    _rate(root / "packs" / "p1", "ann", 2)
    return root


@pytest.fixture(scope="module")
def readme_layout(home: Path) -> Path:
    """The README's layout: a plan elsewhere, its chain in ``runs/p2``, the pack in
    ``packs/p2``; plus a ledger of another study in ``ledgers/``."""
    root = home / "repo"
    assert main(["study", "init", str(root / "tmp-study")]) == 0
    (root / "docs").mkdir()
    plan = root / "docs" / "pilot.toml"
    shutil.move(root / "tmp-study" / "plan.toml", plan)
    shutil.rmtree(root / "tmp-study")
    text = plan.read_text().replace('name = "tmp-study"', 'name = "pilot-readme"')
    plan.write_text(text)
    _small_plan(plan)
    chain = root / "runs" / "p2" / "prereg.jsonl"
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)]) == 0
    _pilot(plan, root / "runs" / "p2")
    _pack(root / "runs" / "p2", root / "packs" / "p2", root / "packs" / "p2.key.json")
    shutil.copytree(EXTRA, root / "ledgers" / "other-run")
    return root


def _state(root: Path):  # type: ignore[no-untyped-def]
    ws = workspace_scan.scan(root)
    (place,) = find_studies(root)
    return summarize_study(place, ws.ledgers, ws.packs)


def test_a_study_folder_is_one_row(study: Path) -> None:
    s = _state(study)
    assert (s.name, s.lock, s.locked, s.scripted) == (
        "s1",
        "locked seq 1 (before-runs)",
        True,
        True,
    )
    assert s.arms_text() == "C+cur 1/1 · B-armed+cur 1/1"
    assert s.packs_text() == "p1: ann 2/2, bob 0/2"
    assert len(s.runs) == 2 and s.verify == s.verdict == "…"  # the slow part comes later
    verify, verdict = check_study(s)
    assert verify == "verified (2 runs)"
    assert verdict.startswith(PRACTICE) and verdict.removeprefix(PRACTICE) in {"MET", "NOT MET"}


def test_not_locked_then_locked_then_edited(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    assert main(["study", "init", str(root)]) == 0
    s = _state(root)
    assert (s.name, s.lock, s.locked) == ("fresh", "not locked", False)
    assert s.arms_text() == "C+cur 0/3 · B-armed+cur 0/3" and s.packs_text() == "no packs"
    assert s.verdict == "not computable: not locked"
    assert check_study(s) == (s.verify, s.verdict)
    assert main(["prereg", "lock", str(root / "plan.toml"), "--stage", "before-runs"]) == 0
    s = _state(root)
    assert s.locked and s.verdict == "not computable: no runs yet"
    plan = root / "plan.toml"
    plan.write_text(plan.read_text().replace("epsilon = 0.15", "epsilon = 0.2"))
    s = _state(root)
    assert (s.lock, s.locked) == ("plan edited after seq 1", False)


def test_a_broken_plan_is_named_on_its_row(tmp_path: Path) -> None:
    root = tmp_path / "broken"
    assert main(["study", "init", str(root)]) == 0
    (root / "plan.toml").write_text('name = "broken"\nruns = "three"\n')
    s = _state(root)
    assert s.error and "plan.toml" in s.error and s.verdict.startswith("not computable: ")


def test_the_readme_layout_is_a_study(readme_layout: Path) -> None:
    s = _state(readme_layout)
    assert s.name == "pilot-readme" and s.lock == "locked seq 1 (before-runs)"
    assert s.place.folder == readme_layout / "runs" / "p2" and s.place.plan is None
    assert s.arms_text() == "C+cur 1/1 · B-armed+cur 1/1" and len(s.runs) == 2
    assert s.packs_text() == "p2: ann 0/2, bob 0/2"
    assert check_study(s)[0] == "verified (2 runs)"
    # opened on the pilot folder itself, the chain beside its ledgers is the study
    (place,) = find_studies(readme_layout / "runs" / "p2")
    assert place.folder == readme_layout / "runs" / "p2" and place.packs is None


def test_the_chain_file_name_is_lockchains() -> None:
    from curiosity_tui.analysis import lockchain, study_state

    assert study_state.CHAIN_FILE == lockchain.CHAIN_FILE


def test_audit_takes_the_study_folder(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    rc = main(["audit", str(study)])
    out = capsys.readouterr().out
    assert rc in (0, 1) and out.startswith(f"closure audit of 2 ledger(s) in {study}")


def _tables_shape(app) -> list[object]:  # type: ignore[no-untyped-def]
    """What a snapshot would show of every table: its rows' text and its columns' widths."""
    shape: list[object] = []
    for table in app.screen.query(DataTable):
        shape.append([c.width for c in table.columns.values()])
        shape.append([str(table.get_row_at(i)) for i in range(table.row_count)])
    return shape


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    """Until the workers are done and the tables have kept their text and column widths for
    three turns (the verify and verdict cells are filled by a worker, then their columns
    widen; under load a fixed number of pauses could catch the cells before the widening)."""
    deadline = time.monotonic() + 60
    last: list[object] | None = None
    steady = 0
    while steady < 3 and time.monotonic() < deadline:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.05)
        now = _tables_shape(pilot.app)
        steady = steady + 1 if now == last else 0
        last = now


def _names(table: DataTable) -> list[str]:  # type: ignore[type-arg]
    return [str(table.get_row_at(i)[0]).split()[0] for i in range(table.row_count)]


@pytest.mark.parametrize("size", [(160, 48), (100, 30)], ids=["160x48", "100x30"])
async def test_the_study_row_opens_its_runs_and_packs(
    readme_layout: Path, size: tuple[int, int]
) -> None:
    from curiosity_tui.screens.browser import BrowserScreen
    from curiosity_tui.screens.pack_open import PackOpenScreen

    app = make_app(readme_layout)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        studies = screen.query_one("#studies", DataTable)
        ledgers = screen.query_one("#ledgers", DataTable)
        packs = screen.query_one("#packs", DataTable)
        assert screen.focused is studies and studies.row_count == 1
        row = [str(c) for c in studies.get_row_at(0)]
        assert row[0] == "pilot-readme scripted" and row[1].startswith("practice · ")
        assert row[2:5] == ["locked seq 1 (before-runs)", "verified (2 runs)", "2/2 in 2 arm(s)"]
        assert row[5] == "p2: ann 0/2, bob 0/2"
        detail = str(screen.query_one("#study-detail", Static).render())
        assert "in runs/p2/" in detail and "C+cur 1/1 · B-armed+cur 1/1" in detail
        assert len(_names(ledgers)) == 3  # the study's two runs and another ledger
        await pilot.press("enter")  # the study: only its runs and packs
        await settle(pilot)
        assert screen.focused is ledgers
        assert sorted(_names(ledgers)) == ["B-armed+cur-r0", "C+cur-r0"]
        assert _names(packs) == ["p2"]
        await pilot.press("enter")  # a run of the study opens in the browser
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("tab", "enter")  # its pack opens for rating
        await settle(pilot)
        assert isinstance(app.screen, PackOpenScreen)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("escape")  # everything again, the study row focused
        await settle(pilot)
        assert len(_names(ledgers)) == 3 and screen.focused is studies


async def test_the_same_keys_as_one_burst(readme_layout: Path) -> None:
    from curiosity_tui.screens.browser import BrowserScreen

    app = make_app(readme_layout)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await burst(pilot, ["enter", "down", "enter"])  # the study, its second run, open it
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert app.screen.title and "C+cur-r0" in app.screen.title


def test_snapshot_workspace_study_100x30(snap_compare, study: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(study), terminal_size=(100, 30), run_before=settle)
