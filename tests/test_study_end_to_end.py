"""Issue 28's acceptance: a whole study driven as a person would, against the offline server,
through the CLI's main function and the app with Pilot key presses (and the same keys as one
burst).

``study init`` → a plan with a human-curated arm (``Hcur``) and a model-curated arm
(``ModelCur``), every arm 3 sessions → ``prereg lock --dry-run`` and ``prereg lock`` (the pack
shows sessions 1 and 3 because the plan's ``[pack]`` says ``1,last``) → ``pilot run
--scripted``, the human arm curated by keys in the app (a merge picked with ↓, taken back,
redone) → the offline model's downgrade proposal decided by a second person (a person's
approval of their own proposal refused) → a relay leg model → person → model, offline, the
person's session by keys → ``pack build`` → two rater copies rated by keys (pressed one by
one, and the same keys as bursts) → ``ratings import`` → ``adjudicate`` by keys → ``unblind``
→ ``verdict`` → ``report``; every output file carries the scripted label.

Each step is a module-scoped fixture on the one before; one test checks them all, so a
parallel run builds the study once. Where the CLI opens an app with
``App.run()``, the test opens the same app under ``run_test()`` and presses its keys
(tests/app_host.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from app_host import piloted, until_done, wait_for

import curiosity_tui.cli.run_cmds as run_cmds
from curiosity_tui.cli import main
from curiosity_tui.contract.downgrades import list_downgrades
from curiosity_tui.ledger import Ledger, verify
from tests.keyburst import burst, keys_of

SEED = "Did the printing press cause the Reformation?"
PLAN = f"""\
name = "e2e"
model = "scripted-demo"
runs = 1
sessions = 3
seed_question = "{SEED}"
epsilon = 0.15
contract = "pilot-02"
configurations = ["Hcur", "ModelCur"]
metrics = ["max_depth", "nodes_worked_voluntary"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["Hcur", "ModelCur"]]
metrics = ["max_depth"]
text = "human curation builds deeper than the model's"

[arms.Hcur]
config = "C+cur"
curator = "human"
curators = ["ann"]

[arms.ModelCur]            # the offline model proposes a downgrade in this run's session 3
config = "C+cur"

[pack]
sessions = "1,last"
scheme = "pilot-02"
"""

RELAY = """\
sessions = ["model:big", "human:ann", "model:small"]

[models.big]
base_url = "http://127.0.0.1:9/v1"
model = "some-large-model"

[models.small]
base_url = "http://127.0.0.1:9/v1"
model = "some-small-model"
"""

#: the person's relay session: PRESERVE with a reason, where the focus stands, one question
PERSON = keys_of(
    "down", "enter", "one session cannot settle it", "tab", "tab",
    "two sources disagree", "enter", "Which source is older?", "ctrl+s",
)  # fmt: skip
GROUNDS = "The archive cannot settle this figure; close the question on what is established."


def cli(capsys: pytest.CaptureFixture[str] | None, *argv: str) -> tuple[int, str, str]:
    if capsys is not None:
        capsys.readouterr()
    rc = main(list(argv))
    if capsys is None:
        return rc, "", ""
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture(scope="module")
def patched() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def drive_run_of(mp: pytest.MonkeyPatch, cls: type, script: Callable[..., Awaitable[None]]) -> None:
    """The CLI's ``cls(...).run()`` opens the app under ``run_test()`` and runs ``script``."""

    def run(self: Any) -> None:
        async def go() -> None:
            async with self.run_test(size=(160, 48)) as pilot:
                await pilot.pause()
                await script(self, pilot)

        asyncio.run(go())

    mp.setattr(cls, "run", run)


# ----------------------------------------------------------------------------- the study


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("e2e") / "press-study"
    assert main(["study", "init", str(root), "--name", "e2e"]) == 0
    (root / "plan.toml").write_text(PLAN, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def locked(study: Path) -> tuple[Path, str]:
    import contextlib
    import io

    plan = str(study / "plan.toml")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["prereg", "lock", plan, "--stage", "before-runs", "--dry-run"]) == 0
    assert not (study / "prereg.jsonl").exists()  # a dry run writes nothing
    assert main(["prereg", "lock", plan, "--stage", "before-runs"]) == 0
    return study, buf.getvalue()


async def _curate_after_s2(app: Any, pilot: Any) -> None:
    """A merge picked with ↓ from the filter, taken back with z, redone — key by key (after
    session 2: after session 1 a scripted run may hold a single question besides the root,
    which leaves the picker one target and nothing for ↓ to move to)."""
    from curiosity_tui.screens.curator import CuratorScreen
    from curiosity_tui.screens.reason import ReasonScreen

    cur = app.screen
    assert isinstance(cur, CuratorScreen) and cur.after == 2
    while cur.current_id() == "q1":  # the root question stays; move to another row
        await pilot.press("down")
    await pilot.press("M")
    form = app.screen
    assert isinstance(form, ReasonScreen)
    first = form.chosen_target()
    await pilot.press("down")
    assert form.chosen_target() != first  # ↓ moved the pick
    await pilot.press("enter", *"same question as its parent", "enter")
    await wait_for(pilot, lambda: app.screen is cur, "the merge")
    await pilot.press("z")  # take it back
    await wait_for(pilot, lambda: isinstance(app.screen, ReasonScreen), "the revert form")
    await pilot.press("enter", *"wrong target", "enter")
    await wait_for(pilot, lambda: app.screen is cur, "the revert")
    await pilot.pause()
    while cur.current_id() == "q1":
        await pilot.press("down")
    await pilot.press("M", "down", "enter", *"merged again, right target", "enter")
    await wait_for(pilot, lambda: app.screen is cur, "the merge redone")


async def _human_arm(app: Any, pilot: Any, req: Any) -> None:
    from curiosity_tui.screens.curator import CuratorScreen

    def curator_after(n: int) -> Callable[[], bool]:
        return lambda: isinstance(app.screen, CuratorScreen) and app.screen.after == n

    await wait_for(pilot, curator_after(1), "the curator after session 1")
    await pilot.pause()
    await burst(pilot, ["ctrl+n"])  # a key sent the way a terminal delivers a burst
    await wait_for(pilot, curator_after(2), "the curator after session 2")
    await pilot.pause()
    await _curate_after_s2(app, pilot)
    await pilot.press("ctrl+n")
    await until_done(app, pilot, req)


@pytest.fixture(scope="module")
def piloted_study(locked: tuple[Path, str], patched: pytest.MonkeyPatch) -> Path:
    study, _ = locked
    patched.setattr(run_cmds, "host_run", piloted(_human_arm, size=(160, 48)))
    out = study / "runs" / "e2e"
    argv = ["pilot", "run", str(study / "plan.toml"), "--out", str(out), "--scripted"]
    assert main([*argv, "--workers", "1", "--curator-name", "ann"]) == 0
    return study


@pytest.fixture(scope="module")
def downgraded(
    piloted_study: Path,
) -> tuple[Path, list[tuple[int, str]]]:
    """The model's proposal (waive) in ModelCur's session 3; ann proposes to weaken the same
    requirement herself and may not approve her own proposal (she withdraws it); bob, a
    second person, approves the model's."""
    led = piloted_study / "runs" / "e2e" / "ModelCur-r0"
    with Ledger.open(led) as probe:
        [model_dg] = [d for d in list_downgrades(probe) if d.proposed_by == "model"]
    grounds = ["--grounds", GROUNDS]
    results: list[tuple[int, str]] = []
    for argv in (
        ["propose", str(led), model_dg.node, model_dg.requirement, "weaken", *grounds,
         "--new-text", "a credible estimate of the figure", "--curator", "ann"],
        ["decide", str(led), "d2", "approve", *grounds, "--curator", "ann"],
        ["decide", str(led), "d2", "reject", *grounds, "--curator", "ann"],
        ["decide", str(led), model_dg.id, "approve", *grounds, "--curator", "bob"],
    ):  # fmt: skip
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            results.append((main(["downgrades", *argv]), err.getvalue()))
    return piloted_study, results


@pytest.fixture(scope="module")
def relayed(downgraded: tuple[Path, Any], patched: pytest.MonkeyPatch) -> Path:
    study, _ = downgraded

    async def person(app: Any, pilot: Any, req: Any) -> None:
        from curiosity_tui.screens.human_session import HumanSessionScreen

        await wait_for(pilot, lambda: isinstance(app.screen, HumanSessionScreen), "session 2")
        await pilot.pause()
        await pilot.press(*PERSON)
        await until_done(app, pilot, req)

    patched.setattr(run_cmds, "host_run", piloted(person, size=(160, 48)))
    relay = study / "relay.toml"
    relay.write_text(RELAY, encoding="utf-8")
    leg = study / "relay" / "leg"
    assert main(["ledger", "new", str(leg), "--seed", SEED, "--config", "C-cur"]) == 0
    argv = ["run", str(leg), "--sessions", "3", "--relay", str(relay), "--scripted"]
    assert main([*argv, "--curator-name", "ann"]) == 0
    return study


@pytest.fixture(scope="module")
def packed(relayed: Path) -> Path:
    study = relayed
    assert main(["pack", "build", str(study / "runs" / "e2e"), "--out", str(study / "packs" / "e2e"),
                 "--key-out", str(study / "keys" / "e2e.key.json"), "--scheme", "pilot-02",
                 "--raters", "ann,bob", "--seed", "5", "--leak-permutations", "20"]) == 0  # fmt: skip
    return study


def _item_keys(q1: str, quote: str, q2: str) -> list[str]:
    """One item of pilot-02: q1's category, grounds and a quote copied exactly from the item
    (q1 asks for at least one; an empty Enter moves on), q2's category and grounds; save."""
    return keys_of(q1, "enter", "section three says so", "enter", quote, "enter", "enter",
                   q2, "enter", "every figure is sourced", "enter", "enter", "ctrl+s")  # fmt: skip


def _run_item(study: Path, run: str) -> str:
    key = json.loads((study / "keys" / "e2e.key.json").read_text())
    return next(i for i, e in key["items"].items() if e["run"] == run and e["kind"] == "run")


@pytest.fixture(scope="module")
def rated(packed: Path, patched: pytest.MonkeyPatch) -> Path:
    """ann and bob rate their copies in the rating app by keys (ann's first item key by key,
    every other item as one burst of the same kind of keys); bob calls the human-curated run's item "repeated" where ann says "advanced"."""
    from curiosity_tui.app.standalone import RatingApp

    study = packed
    pack = study / "packs" / "e2e"
    first = _run_item(study, "Hcur-r0")
    for rater in ("ann", "bob"):
        copy = study / "copies" / rater
        assert main(["pack", "export", str(pack), "--rater", rater, "--out", str(copy)]) == 0

        async def rate(app: Any, pilot: Any, rater: str = rater) -> None:
            session = app.rating_screen.session
            for item in session.order:  # this rater's own order
                quote = " ".join(session.pack.item(item).sections[2].split()[:4])
                q1 = "r" if (rater == "bob" and item == first) else "a"
                keys = _item_keys(q1, quote, "n")
                if rater == "ann" and item == session.order[0]:  # key by key, then bursts
                    await pilot.press(*keys)
                else:
                    await burst(pilot, keys, settle=30)
            await pilot.pause()
            _, saved, total = app.rating_screen.progress
            assert saved == total, f"{rater} saved {saved} of {total} items"

        drive_run_of(patched, RatingApp, rate)
        assert main(["rate", str(copy), "--rater", rater]) == 0
        own = copy / "ratings" / f"{rater}.jsonl"
        assert main(["ratings", "import", str(pack), str(own)]) == 0
    return study


@pytest.fixture(scope="module")
def adjudicated(rated: Path, patched: pytest.MonkeyPatch) -> Path:
    from curiosity_tui.app.standalone import AdjudicationApp

    pack = rated / "packs" / "e2e"

    async def settle_it(app: Any, pilot: Any) -> None:
        await pilot.press(*keys_of("enter", "a", "both sessions advance the question", "enter"))
        await pilot.pause()

    drive_run_of(patched, AdjudicationApp, settle_it)
    assert main(["adjudicate", str(pack), "--coordinator", "cora"]) == 0
    return rated


@pytest.fixture(scope="module")
def outputs(adjudicated: Path) -> dict[str, str]:
    """unblind, verdict, metrics and report, each written into report/."""
    import contextlib
    import io

    study = adjudicated
    rep = study / "report"
    texts: dict[str, str] = {}
    for name, argv in (
        ("unblind.txt", ["unblind", str(study / "packs" / "e2e"), "--by", "cora",
                         "--key", str(study / "keys" / "e2e.key.json")]),
        ("verdict.txt", ["verdict", str(study)]),
        ("metrics.txt", ["metrics", str(study)]),
    ):  # fmt: skip
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(argv) == 0, name
        (rep / name).write_text(buf.getvalue(), encoding="utf-8")
        texts[name] = buf.getvalue()
    assert main(["metrics", str(study), "--csv", str(rep / "metrics.csv")]) == 0
    assert (
        main(["agreement", str(study / "packs" / "e2e"), "--csv", str(rep / "agreement.csv")]) == 0
    )
    assert main(["report", str(study), "--out", str(rep)]) == 0
    texts["report.md"] = (rep / "report.md").read_text(encoding="utf-8")
    return texts


# ----------------------------------------------------------------------------- the checks


def test_a_study_from_plan_to_report(
    locked: tuple[Path, str],
    piloted_study: Path,
    downgraded: tuple[Path, list[tuple[int, str]]],
    relayed: Path,
    packed: Path,
    adjudicated: Path,
    outputs: dict[str, str],
) -> None:
    """One test over every step, so that a parallel run (``-n 2``) builds the study once,
    on one worker; each check below names the step it looks at."""
    check_the_dry_run_shows_the_human_arm_and_the_packs_sessions(locked)
    check_the_human_arm_was_curated_by_keys_in_the_app(piloted_study)
    check_the_models_downgrade_is_decided_by_a_second_person(downgraded)
    check_the_relay_leg_ran_model_person_model_offline(relayed)
    check_the_pack_shows_sessions_1_and_3_and_keeps_the_curators_apart(packed)
    check_both_raters_rated_every_item_by_keys_and_one_disagreement_was_adjudicated(adjudicated)
    check_unblind_verdict_and_report_are_labelled_and_hold_the_rating_results(outputs, adjudicated)
    check_every_output_file_carries_the_scripted_label(outputs, adjudicated)


def check_the_dry_run_shows_the_human_arm_and_the_packs_sessions(locked: tuple[Path, str]) -> None:
    study, dry = locked
    assert "2 arm(s): Hcur (C+cur, human-curated by ann), ModelCur (C+cur)" in dry
    assert "ok    pack.sessions: 1,last: each item shows sessions 1 and 3 of 3" in dry
    assert dry.rstrip().endswith("result: would lock")
    assert len((study / "prereg.jsonl").read_text().splitlines()) == 1


def check_the_human_arm_was_curated_by_keys_in_the_app(piloted_study: Path) -> None:
    runs = piloted_study / "runs" / "e2e"
    human = runs / "Hcur-r0"
    assert verify(human).ok and verify(runs / "ModelCur-r0").ok
    with Ledger.open(human) as led:
        assert led.meta.curator == "human" and led.last_session == 3
        events = led.events()
    merges = [e for e in events if e.kind == "nodes_merged"]
    reverts = [e for e in events if e.kind == "curator_reverted"]
    assert [e.actor for e in merges] == ["human:ann", "human:ann"]
    assert [(e.actor, e.data["reason"]) for e in reverts] == [("human:ann", "wrong target")]
    assert merges[0].data["reason"] == "same question as its parent"
    assert merges[1].data["reason"] == "merged again, right target"


def check_the_models_downgrade_is_decided_by_a_second_person(
    downgraded: tuple[Path, list[tuple[int, str]]],
) -> None:
    study, results = downgraded
    (proposed, _), (self_approval, err), (withdrawn, _), (approved, _) = results
    assert (proposed, self_approval, withdrawn, approved) == (0, 2, 0, 0)
    assert "was proposed by human:ann" in err and "--allow-self-approval" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    with Ledger.open(study / "runs" / "e2e" / "ModelCur-r0") as led:
        listed = {d.id: d for d in list_downgrades(led)}
    assert listed["d1"].proposed_by == "model" and listed["d1"].status == "approved"
    assert listed["d1"].decision is not None and listed["d1"].decision["by"] == "human:bob"
    assert listed["d2"].status == "rejected"


def check_the_relay_leg_ran_model_person_model_offline(relayed: Path) -> None:
    leg = relayed / "relay" / "leg"
    assert verify(leg).ok
    with Ledger.open(leg) as led:
        minds = [(r.mind.kind, r.mind.name) for r in led.session_records() if r.mind]
    assert minds == [("model", "scripted-big"), ("human", "ann"), ("model", "scripted-small")]


def check_the_pack_shows_sessions_1_and_3_and_keeps_the_curators_apart(packed: Path) -> None:
    key = json.loads((packed / "keys" / "e2e.key.json").read_text())
    runs = {e["run"]: e for e in key["items"].values() if e["kind"] == "run"}
    assert {r: tuple(e["sessions"]) for r, e in runs.items()} == {
        "Hcur-r0": (1, 3),
        "ModelCur-r0": (1, 3),
    }
    assert runs["Hcur-r0"]["group"] == "C+cur(human)" and runs["ModelCur-r0"].get("group") is None
    manifest = json.loads((packed / "packs" / "e2e" / "manifest.json").read_text())
    assert manifest["scripted"] is True and manifest["sessions"] == "1,last"


def check_both_raters_rated_every_item_by_keys_and_one_disagreement_was_adjudicated(
    adjudicated: Path,
) -> None:
    from curiosity_tui.packs.disagreement import adjudication_state

    state = adjudication_state(adjudicated / "packs" / "e2e")
    assert state.complete and state.raters == ["ann", "bob"]
    assert [(d.question, d.raw) for d in state.disagreements] == [
        ("q1", {"ann": "advanced", "bob": "repeated"})
    ]
    [d] = state.disagreements
    assert d.adjudication is not None and d.adjudication.category == "advanced"
    assert d.adjudication.adjudicator == "human:cora"


def check_unblind_verdict_and_report_are_labelled_and_hold_the_rating_results(
    outputs: dict[str, str], adjudicated: Path
) -> None:
    unblinded = outputs["unblind.txt"]
    assert unblinded.startswith("SCRIPTED") and "C+cur(human)" in unblinded
    assert "adjudicated (the coordinator's category" in unblinded
    assert "Verdict over SCRIPTED replies" in outputs["verdict.txt"]
    report = outputs["report.md"]
    assert "## Rating study: pack" in report
    results = report.split("### Rating results", 1)[1]
    assert results.startswith(" — PRACTICE: the pack was built from scripted runs")
    assert "**Adjudication.** 1 disagreement(s) (item × question; q1: 1); 1 adjudicated" in results
    assert "| raw, human raters | C+cur(human) |" in results
    assert "| adjudicated | C+cur |" in results
    assert "**Control items** (expected category" in results
    figures = sorted((adjudicated / "report").glob("report-*.svg"))
    from curiosity_tui.analysis.figures import available

    if available():
        assert {"report-rating-q1.svg", "report-rating-q2.svg"} <= {f.name for f in figures}
        assert "(report-rating-q1.svg)" in report


def check_every_output_file_carries_the_scripted_label(
    outputs: dict[str, str], adjudicated: Path
) -> None:
    written = [
        p
        for p in sorted((adjudicated / "report").iterdir())
        if not p.name.endswith(".provenance.json")  # the CSVs' sidecars: what produced them
    ]
    assert {p.suffix for p in written} >= {".md", ".txt", ".csv"}
    unlabelled = [p.name for p in written if "scripted" not in p.read_text().lower()]
    assert unlabelled == []
    for csv_name in ("metrics.csv", "agreement.csv"):
        import csv

        with (adjudicated / "report" / csv_name).open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert rows and {r["replies"] for r in rows} == {"scripted"}, csv_name
