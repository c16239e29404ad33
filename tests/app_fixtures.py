"""Deterministic example workspaces for the app tests, built through the ledger API only."""

from __future__ import annotations

import itertools
from pathlib import Path

from curiosity_tui.ledger import Ledger, RunMeta, SessionRecord

SEED = "Did the printing press cause the Reformation, or only speed it up?"
MARKUP = "[bold red]x[/] [link=file:///etc]y[/link]\x1b[31m\x07\x00 end"


def fixed_clock():
    counter = itertools.count(1)

    def clock() -> str:
        n = next(counter)
        return f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.000000Z"

    return clock


def _record(led: Ledger, session: int, focus: str, decision: str) -> SessionRecord:
    return SessionRecord(
        session=session,
        config=led.meta.config,
        contract=led.meta.contract,
        focus=focus,
        decision=decision,  # type: ignore[arg-type]
        inputs={"rendering": led.rendering(session)},
        outputs={"deliverable": "{}"},
        output_text=f"session {session} output",
    )


def build_example(path: Path, *, contract: str = "pilot-01", markup: bool = True) -> Path:
    """A three-session run: a node tree, facts, a return condition with checks (one satisfied
    without verified evidence), preserved candidates, a pending downgrade, decay."""
    led = Ledger.create(
        path,
        RunMeta(name=path.name, seed=SEED, config="C+cur", contract=contract, curator="human"),  # type: ignore[arg-type]
        clock=fixed_clock(),
    )
    with led:
        # session 1
        rec = _record(led, 1, "q1", "PRESERVE")
        with led.batch(1) as b:
            b.emit("session_started", None, "system", {"focus": "q1", "config": "C+cur"})
            b.emit("question_resurfaced", "q1", "system", {"how": "forced_focus"})
            q2 = b.create_node(
                "Which regions had presses before 1517?",
                parent="q1",
                origin="open_layer",
                actor="model",
            )
            q3 = b.create_node(
                "How fast did Luther's theses circulate?",
                parent="q1",
                origin="open_layer",
                actor="model",
            )
            b.create_node(
                MARKUP if markup else "What did literacy rates look like?",
                parent="q1",
                origin="new_question",
                actor="model",
            )
            b.emit("fact_attached", "q1", "model", {"text": "Gutenberg's press dates to c. 1450."})
            b.emit("fact_attached", q3, "model", {"text": "The theses reached Rome within months."})
            b.emit(
                "return_condition_set",
                "q1",
                "model",
                {
                    "required_facts": [
                        {"id": "r1", "text": "Print runs of Reformation pamphlets 1517-1525."},
                        {"id": "r2", "text": "Reformation-era literacy by region."},
                    ],
                    "required_actions": ["Compare regions with and without presses."],
                    "closure_test": "Causal claim survives the regional comparison.",
                },
            )
            b.emit(
                "dependency_checked",
                "q1",
                "model",
                {
                    "requirement": "r1",
                    "claimed": "satisfied",
                    "evidence_text": "Pettegree estimates hundreds of thousands of copies.",
                    "result": "satisfied",
                    "contract": contract,
                },
            )
            b.emit(
                "candidate_preserved",
                "q1",
                "model",
                {"text": "The press was necessary but not sufficient.", "delta": -0.21},
            )
            b.record_session(rec)
            b.snapshot("session")
        # session 2
        rec = _record(led, 2, q2, "PRESERVE")
        with led.batch(2) as b:
            b.emit("session_started", None, "system", {"focus": q2, "config": "C+cur"})
            b.emit("question_resurfaced", q2, "system", {"how": "forced_focus"})
            b.emit("question_resurfaced", "q1", "model", {"how": "voluntary"})
            q5 = b.create_node(
                "Were presses concentrated in imperial cities?",
                parent=q2,
                origin="open_layer",
                actor="model",
            )
            b.emit("fact_attached", q2, "model", {"text": "Over 200 towns had presses by 1500."})
            b.emit(
                "fact_attached", q5, "model", {"text": "Augsburg and Nuremberg were major centres."}
            )
            b.emit(
                "dependency_checked",
                "q1",
                "model",
                {
                    "requirement": "r2",
                    "claimed": "not_satisfied",
                    "evidence_text": "No regional literacy data on file.",
                    "result": "not_satisfied",
                    "contract": contract,
                },
            )
            b.emit(
                "downgrade_proposed",
                "q1",
                "model",
                {
                    "id": "d1",
                    "requirement": "r2",
                    "action": "waive",
                    "grounds": "Regional literacy data for the period do not survive in usable form.",
                    "proposed_by": "model",
                    "session": 2,
                },
            )
            b.record_session(rec)
            b.snapshot("session")
        # session 3
        rec = _record(led, 3, q3, "ANSWER")
        with led.batch(3) as b:
            b.emit("session_started", None, "system", {"focus": q3, "config": "C+cur"})
            b.emit("question_resurfaced", q3, "system", {"how": "forced_focus"})
            b.emit("node_answered", q3, "model", {"answer": "Within two months.", "delta": 0.05})
            b.emit("node_closed", q3, "model", {"reason": "answered"})
            b.create_node(
                "Who printed the 1518 editions?", parent=q3, origin="open_layer", actor="model"
            )
            b.record_session(rec)
            b.snapshot("session")
            b.emit("decay_applied", None, "system", {"nodes": ["q4"]})
            b.snapshot("decay")
    return path


def build_workspace(root: Path, *, ledgers: int = 2, markup: bool = True) -> Path:
    """``root/ledgers/{example-pilot-01, example-pilot-02, ...}`` and an empty ``packs/``."""
    (root / "ledgers").mkdir(parents=True, exist_ok=True)
    (root / "packs").mkdir(exist_ok=True)
    build_example(root / "ledgers" / "example-pilot-01", contract="pilot-01", markup=markup)
    if ledgers > 1:
        build_example(root / "ledgers" / "example-pilot-02", contract="pilot-02", markup=False)
    for i in range(2, ledgers):
        build_example(root / "ledgers" / f"run-{i:02d}", contract="pilot-02", markup=False)
    return root


def build_big(path: Path, n: int = 10_000, fanout: int = 8) -> Path:
    """A ledger of ``n`` nodes in a tree of the given fan-out, over a few sessions."""
    led = Ledger.create(
        path, RunMeta(name=path.name, seed=SEED, config="C-cur"), clock=fixed_clock()
    )
    with led:
        made = 1
        session = 0
        while made < n:
            session += 1
            with led.batch(session) as b:
                b.emit("question_resurfaced", "q1", "system", {"how": "forced_focus"})
                target = min(n, made + max(1, n // 4))
                while made < target:
                    parent = f"q{(made - 1) // fanout + 1}"
                    b.create_node(
                        f"Question {made + 1} under {parent}",
                        parent=parent,
                        origin="new_question",
                        actor="model",
                    )
                    made += 1
                b.record_session(SessionRecord(session=session, inputs={"rendering": ""}))
                b.snapshot("session")
    return path
