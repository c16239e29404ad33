"""A human session in the app, driven by keys (issue 15, item 2): on a C ledger whose session 1
a model took against the scripted server, a person answers the fields, checks r1 with the
passage retrieval found in the ledger's source, adds a question and PRESERVEs with a reason.
The same keys pressed one by one and sent as one burst (no delay) give the same session; a
draft survives leaving and reopens; the model's input is shown literally."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from human_fixtures import PASSAGE, build_after_model_session, copy_ledger
from textual.widgets import Static

from curiosity_tui.app.navigator import Navigation
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.models import Mind
from curiosity_tui.ledger.render import render_session_input
from curiosity_tui.protocol.human_drafts import draft_path
from curiosity_tui.screens.human_session import HumanSessionScreen
from curiosity_tui.screens.monitor import human_session_hook
from curiosity_tui.widgets.literal import clean
from tests.keyburst import burst, keys_of

SIZE = (150, 45)

#: from the first field (the decision) to the open layer's living questions
FIRST = keys_of(
    "down", "enter",  # decision: PRESERVE
    "one city's count is not a comparison", "tab",  # reason (several lines: tab moves on)
    "tab",  # answer: none withheld
    "counted for Wittenberg only", "enter",  # where the focus stands
)  # fmt: skip
#: from the living questions to the first new question, then ctrl+s
REST = keys_of(
    "Was Augsburg different?", "enter", "enter", "enter",  # living questions
    "a second city's count", "enter",  # return condition: required facts
    "enter",  # required actions: none
    "two cities compared", "enter",  # closure test
    "down", "enter",  # check r1: satisfied
    "down", "enter",  # evidence: the retrieved passage
    "enter",  # grounds: the passage itself
    "Who kept the guild registers?",  # a new question (parent: the focus)
    "ctrl+s",
)  # fmt: skip
KEYS = FIRST + REST


class Host(Navigation):
    """A bare app that opens one human session and keeps its result."""

    def __init__(self, led: Ledger, t: int = 2, person: str = "alice") -> None:
        super().__init__()
        self.led, self.t, self.person = led, t, person
        self.results: list[Any] = []

    def on_mount(self) -> None:
        self.open_human_session(self.led, self.t, self.person, self.results.append)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_after_model_session(tmp_path_factory.mktemp("human-app") / "relay")


@pytest.fixture
def path(base: Path, tmp_path: Path) -> Path:
    return copy_ledger(base, tmp_path / "relay")


def outcome(path: Path) -> dict[str, Any]:
    """What session 2 wrote, in the terms the acceptance names."""
    assert verify(path).ok
    with Ledger.open(path) as led:
        rec = led.session_records()[-1]
        nodes = led.raw_nodes()
        events = [e for e in led.events() if e.session == 2]
    focus = nodes[rec.focus or ""]
    person = json.loads(rec.outputs["human"])
    return {
        "session": rec.session,
        "mind": rec.mind,
        "decision": (rec.decision, person["reason"]),
        "delta": rec.delta,
        "check": (focus["checks"][-1]["requirement"], focus["checks"][-1]["result"]),
        "evidence": (focus["evidence"][-1]["status"], focus["evidence"][-1]["passage"]),
        "questions": sorted(rec.questions),
        "return_condition": (
            [r["text"] for r in focus["return_condition"]["required_facts"]],
            focus["return_condition"]["closure_test"],
        ),
        "status": person["deliverable"]["open_layer"]["node_status"],
        "actors": sorted({e.actor for e in events}),
    }


EXPECTED = {
    "session": 2,
    "mind": Mind(kind="human", name="alice"),
    "decision": ("PRESERVE", "one city's count is not a comparison"),
    "delta": None,
    "check": ("r1", "satisfied"),
    "evidence": ("verified", PASSAGE),
    "questions": ["Was Augsburg different?", "Who kept the guild registers?"],
    "return_condition": (["a second city's count"], "two cities compared"),
    "status": "counted for Wittenberg only",
    "actors": ["human:alice", "system"],
}


async def test_keys_drive_a_human_session_to_one_committed_batch(path: Path) -> None:
    with Ledger.open(path, write=True) as led:
        app = Host(led)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, HumanSessionScreen)
            await pilot.press(*KEYS)
            await pilot.pause()
        assert app.results == [True]
    assert outcome(path) == EXPECTED
    assert not draft_path(path, 2, "alice").exists()  # committed: the draft is gone


async def test_the_same_keys_as_one_burst_land_the_same(path: Path) -> None:
    with Ledger.open(path, write=True) as led:
        app = Host(led)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await burst(pilot, KEYS, settle=40)
        assert app.results == [True]
    assert outcome(path) == EXPECTED


async def test_a_draft_survives_leaving_and_reopens(path: Path) -> None:
    with Ledger.open(path, write=True) as led:
        app = Host(led)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await burst(pilot, [*FIRST, "escape"])
        assert app.results == [False]
        assert led.last_session == 1  # nothing committed
        kept = json.loads(draft_path(path, 2, "alice").read_text(encoding="utf-8"))
        assert kept["fields"]["reason"] == "one city's count is not a comparison"
        assert kept["fields"]["node_status"] == "counted for Wittenberg only"
        assert kept["fields"]["decision"] == "PRESERVE"
        again = Host(led)
        async with again.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = again.screen
            assert isinstance(screen, HumanSessionScreen)
            assert screen.form_values() == kept["fields"]
            assert "draft of this session is back" in str(screen.query_one("#hs-error").render())
            # past the four fields already filled, the rest of the keys finish the session
            await burst(pilot, ["tab"] * 4 + REST, settle=40)
        assert again.results == [True]
    assert outcome(path) == EXPECTED


async def test_a_deliverable_the_rules_refuse_is_not_committed(path: Path) -> None:
    with Ledger.open(path, write=True) as led:
        app = Host(led)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await burst(pilot, ["ctrl+s"])
            line = str(app.screen.query_one("#hs-error", Static).render())
            assert isinstance(app.screen, HumanSessionScreen)
        assert app.results == []
        assert led.last_session == 1
    assert line.startswith("Not committed: ")
    assert "state a reason" in line and "living_questions: give at least 1" in line


async def test_model_text_is_shown_literally(tmp_path: Path) -> None:
    seed = "Did the [bold]press[/bold] cause it?\x1b[2J\x07 [link=x]y[/link]"
    path = tmp_path / "literal"
    Ledger.create(path, RunMeta(name="literal", seed=seed, config="C-cur")).close()
    with Ledger.open(path, write=True) as led:
        rendering = render_session_input(led.raw_nodes(), 1)
        app = Host(led, t=1)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            shown = str(app.screen.query_one("#hs-rendering", Static).render())
            summary = str(app.screen.query_one("#hs-summary", Static).render())
    assert shown == clean(rendering)  # the bytes, control characters made visible
    assert "[bold]press[/bold]" in shown and "␛[2J␇" in shown and "\x1b" not in shown
    assert "[link=x]y[/link]" in summary and "No model ran the judge" in summary


async def test_the_monitors_hook_opens_the_screen_and_returns_the_persons_result(
    path: Path,
) -> None:
    """The runner awaits the hook on its own thread and loop, as the run monitor runs it."""
    with Ledger.open(path, write=True) as led:
        app = Navigation()
        got: list[bool] = []
        async with app.run_test(size=SIZE) as pilot:
            hook = human_session_hook(app.call_from_thread, app.open_human_session)
            # a daemon: if the test fails before the screen settles the hook, nothing resolves
            # its future and the thread must not keep pytest from exiting (issue 25 item 11)
            runner = threading.Thread(
                target=lambda: got.append(asyncio.run(hook(led, 2, "alice"))),
                name="human-session-hook",
                daemon=True,
            )
            runner.start()
            for _ in range(200):
                await pilot.pause(0.01)
                if isinstance(app.screen, HumanSessionScreen):
                    break
            assert isinstance(app.screen, HumanSessionScreen)
            await burst(pilot, KEYS, settle=40)
            await asyncio.to_thread(runner.join, 60)
        assert not runner.is_alive(), "the hook did not return within 60 s"
        assert got == [True]
    assert outcome(path) == EXPECTED


async def test_quitting_the_app_mid_form_keeps_the_draft(path: Path) -> None:
    """Quitting does not save by itself: the timed save (within SAVE_AFTER_S of a change)
    already holds what was typed; keys still queued when ctrl+q arrives are not kept."""
    with Ledger.open(path, write=True) as led:
        app = Host(led)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await burst(pilot, FIRST)
            for _ in range(200):
                await pilot.pause(0.05)
                if draft_path(path, 2, "alice").exists():
                    break
            await pilot.press("ctrl+q")
        assert app.results == [] and led.last_session == 1
    kept = json.loads(draft_path(path, 2, "alice").read_text(encoding="utf-8"))
    assert kept["fields"]["node_status"] == "counted for Wittenberg only"


CHILD = """
import asyncio, json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from test_app_human_session import FIRST, Host, SIZE
from keyburst import burst
from curiosity_tui.ledger import Ledger
from curiosity_tui.protocol.human_drafts import draft_path

async def main() -> None:
    path = Path(sys.argv[1])
    with Ledger.open(path, write=True) as led:
        app = Host(led)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await burst(pilot, FIRST)
            draft = draft_path(path, 2, "alice")
            for _ in range(600):  # the timed save, not a quit, writes the draft
                await pilot.pause(0.05)
                if draft.exists() and "Wittenberg" in draft.read_text(encoding="utf-8"):
                    break
            print("typed", flush=True)
            await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_a_draft_survives_sigkill_and_reopens(
    path: Path, subprocess_env: dict[str, str]
) -> None:
    import signal
    import subprocess
    import sys

    tests = Path(__file__).resolve().parent
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(tests)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env,
        text=True,
    )
    try:
        line = await asyncio.to_thread(proc.stdout.readline)  # type: ignore[union-attr]
        assert line.strip() == "typed", proc.stderr.read() if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    with Ledger.open(path, write=True) as led:
        assert led.last_session == 1
        app = Host(led)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, HumanSessionScreen)
            assert screen.form_values()["reason"] == "one city's count is not a comparison"
            await burst(pilot, ["tab"] * 4 + REST, settle=40)
        assert app.results == [True]
    assert outcome(path) == EXPECTED


@pytest.mark.parametrize("one_burst", [False, True])
async def test_the_reason_and_answer_take_several_lines(path: Path, one_burst: bool) -> None:
    """Issue 28: the answer and reason were one-line fields; Enter now starts a new line in
    them (tab moves on) and the committed reason keeps the lines."""
    keys = keys_of(
        "down", "enter",  # PRESERVE
        "one city only", "enter", "a second city is needed", "tab",  # a two-line reason
        "first line withheld", "enter", "second line", "tab",  # a two-line answer
    )  # fmt: skip
    with Ledger.open(path, write=True) as led:
        app = Host(led)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, HumanSessionScreen)
            if one_burst:
                await burst(pilot, keys, settle=40)
            else:
                for k in keys:
                    await pilot.press(k)
                await pilot.pause()
            values = screen.form_values()
    assert values["reason"] == "one city only\na second city is needed"
    assert values["answer"] == "first line withheld\nsecond line"
