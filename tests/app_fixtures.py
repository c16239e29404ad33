"""Deterministic example workspaces for the app tests, built through the ledger API only."""

from __future__ import annotations

import itertools
from pathlib import Path

from curiosity_tui.ledger import Ledger, RunMeta, SessionRecord
from curiosity_tui.ledger.events import (
    CandidatePreserved,
    DecayApplied,
    DependencyChecked,
    DowngradeProposed,
    FactAttached,
    NodeAnswered,
    NodeClosed,
    QuestionResurfaced,
    ReturnConditionSet,
    SessionStarted,
)

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
            b.emit(SessionStarted(focus="q1", config="C+cur"))
            b.emit(QuestionResurfaced(how="forced_focus"), node="q1")
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
            b.emit(
                FactAttached(text="Gutenberg's press dates to c. 1450."), node="q1", actor="model"
            )
            b.emit(
                FactAttached(text="The theses reached Rome within months."), node=q3, actor="model"
            )
            b.emit(
                ReturnConditionSet(
                    required_facts=[
                        {"id": "r1", "text": "Print runs of Reformation pamphlets 1517-1525."},
                        {"id": "r2", "text": "Reformation-era literacy by region."},
                    ],
                    required_actions=["Compare regions with and without presses."],
                    closure_test="Causal claim survives the regional comparison.",
                ),
                node="q1",
                actor="model",
            )
            b.emit(
                DependencyChecked(
                    requirement="r1",
                    claimed="satisfied",
                    evidence_text="Pettegree estimates hundreds of thousands of copies.",
                    result="satisfied",
                    contract=contract,
                ),
                node="q1",
                actor="model",
            )
            b.emit(
                CandidatePreserved(text="The press was necessary but not sufficient.", delta=-0.21),
                node="q1",
                actor="model",
            )
            b.record_session(rec)
            b.snapshot("session")
        # session 2
        rec = _record(led, 2, q2, "PRESERVE")
        with led.batch(2) as b:
            b.emit(SessionStarted(focus=q2, config="C+cur"))
            b.emit(QuestionResurfaced(how="forced_focus"), node=q2)
            b.emit(QuestionResurfaced(how="voluntary"), node="q1", actor="model")
            q5 = b.create_node(
                "Were presses concentrated in imperial cities?",
                parent=q2,
                origin="open_layer",
                actor="model",
            )
            b.emit(FactAttached(text="Over 200 towns had presses by 1500."), node=q2, actor="model")
            b.emit(
                FactAttached(text="Augsburg and Nuremberg were major centres."),
                node=q5,
                actor="model",
            )
            b.emit(
                DependencyChecked(
                    requirement="r2",
                    claimed="not_satisfied",
                    evidence_text="No regional literacy data on file.",
                    result="not_satisfied",
                    contract=contract,
                ),
                node="q1",
                actor="model",
            )
            b.emit(
                DowngradeProposed(
                    id="d1",
                    requirement="r2",
                    action="waive",
                    grounds="Regional literacy data for the period do not survive in usable form.",
                    proposed_by="model",
                    session=2,
                ),
                node="q1",
                actor="model",
            )
            b.record_session(rec)
            b.snapshot("session")
        # session 3
        rec = _record(led, 3, q3, "ANSWER")
        with led.batch(3) as b:
            b.emit(SessionStarted(focus=q3, config="C+cur"))
            b.emit(QuestionResurfaced(how="forced_focus"), node=q3)
            b.emit(NodeAnswered(answer="Within two months.", delta=0.05), node=q3, actor="model")
            b.emit(NodeClosed(reason="answered"), node=q3, actor="model")
            b.create_node(
                "Who printed the 1518 editions?", parent=q3, origin="open_layer", actor="model"
            )
            b.record_session(rec)
            b.snapshot("session")
            b.emit(DecayApplied(nodes=["q4"]))
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
                b.emit(QuestionResurfaced(how="forced_focus"), node="q1")
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
