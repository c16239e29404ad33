"""Ledgers built through the ledger API for the ledger tests (not hand-written JSON)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from curiosity_tui.ledger.events import (
    CandidatePreserved,
    DependencyChecked,
    FactAttached,
    ReturnConditionSet,
    SessionStarted,
)
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta, SessionRecord
from curiosity_tui.ledger.render import render_session_input
from curiosity_tui.ledger.transitions import apply_decay, resurface

SEED = "Did the printing press cause the Reformation?"


def run_session(led: Ledger, t: int, *, focus: str | None = None, new: int = 1) -> None:
    """A small but complete session: resurface the focus, a fact, new questions, a return
    condition and a check on the focus, a preserved candidate, snapshots, decay, record."""
    nodes = led.raw_nodes()
    rendering = render_session_input(nodes, t)
    with led.batch(t) as b:
        b.emit(SessionStarted(focus=focus, config="C-cur"))
        if focus is not None:
            resurface(b, focus, "forced_focus", "system")
            b.emit(FactAttached(text=f"fact from session {t}"), node=focus, actor="model")
            n = b.node(focus)
            if n["return_condition"] is None:
                b.emit(
                    ReturnConditionSet(
                        required_facts=[
                            {"id": "r1", "text": "printing output by 1520", "status": "unchecked"},
                            {"id": "r2", "text": "literacy rates", "status": "unchecked"},
                        ],
                        required_actions=["compare regions"],
                        closure_test="a regional comparison exists",
                    ),
                    node=focus,
                    actor="model",
                )
            else:
                b.emit(
                    DependencyChecked(
                        requirement="r1",
                        claimed="not_satisfied",
                        evidence_text=f"EVIDENCE-TEXT-{t}",
                        result="not_satisfied",
                    ),
                    node=focus,
                    actor="model",
                )
            b.emit(CandidatePreserved(text=f"CANDIDATE-{t}", delta=0.1), node=focus, actor="model")
        for i in range(new):
            b.create_node(f"question {t}.{i}", parent=focus, origin="new_question", actor="model")
        b.snapshot("session")
        apply_decay(b)
        b.snapshot("decay")
        b.record_session(SessionRecord(session=t, focus=focus, inputs={"rendering": rendering}))


def build(
    path: Path, sessions: int, *, clock: Callable[[], str] | None = None, config: str = "C-cur"
) -> Ledger:
    led = Ledger.create(path, RunMeta(name=path.name, seed=SEED, config=config), clock=clock)
    for t in range(1, sessions + 1):
        run_session(led, t, focus="q1" if t % 2 else None)
    return led
