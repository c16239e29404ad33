"""Synthetic runs (real ledgers, made-up text) for tests, demos and the leak check's
self-test. Deterministic for a given seed. Not used by any command that rates or unblinds.

The text imitates the six configurations' surface formats as the report describes them:
A answers the seed question in essays; B is bare self-ask and carries nothing; the
store-bearing arms work against a listing of the store; C adds an open layer with living
questions and return conditions.
"""

from __future__ import annotations

import random
from pathlib import Path

from curiosity_tui.ledger import Ledger, RunMeta, SessionRecord
from curiosity_tui.ledger.events import (
    CandidatePreserved,
    FactAttached,
    QuestionResurfaced,
    ReturnConditionSet,
    SessionStarted,
)
from curiosity_tui.ledger.models import RequiredFact
from curiosity_tui.packs.build import CONFIGS, NO_STORE_CONFIGS

SEED_QUESTION = "Why did the printing press accelerate the spread of the Reformation after 1517?"

_EDITIONS = "A count of editions per city for 1517-1520."
_TOPICS = [
    "the price of paper in Saxony",
    "pamphlet length and vernacular German",
    "woodcut illustrations for readers who could not read",
    "the network of printers in Nuremberg, Basel and Augsburg",
    "censorship that failed to keep pace",
    "sermons read aloud in taverns",
    "Luther's own output as a share of all titles",
    "the role of trade fairs in Frankfurt",
    "how quickly reprints followed a first edition",
]
_CLAIMS = [
    "Wittenberg presses issued about {n} editions in {y}.",
    "Roughly {p}% of pamphlets were under sixteen pages.",
    "A pamphlet could be reprinted in another city within {k} weeks.",
    "Most readers heard texts read aloud rather than reading them.",
    "Printers followed demand more than doctrine.",
]


def _claim(rng: random.Random) -> str:
    return rng.choice(_CLAIMS).format(
        n=rng.randint(100, 900),
        y=rng.randint(1518, 1525),
        p=rng.randint(40, 80),
        k=rng.randint(2, 8),
    )


def _essay(rng: random.Random, sentences: int) -> str:
    parts = []
    for _ in range(sentences):
        topic = rng.choice(_TOPICS)
        parts.append(f"One part of the answer lies in {topic}. {_claim(rng)}")
    return " ".join(parts)


def _output(rng: random.Random, config: str, session: int, asked: list[str]) -> str:
    """Delivered text in the shapes ``protocol/session.py`` / ``steps.py`` write: A an essay; B "- question"
    lines; B-armed "- question", "* fact", "> action note"; C an answer or a node status,
    "- living question", "* fact", "> note", and on PRESERVE "? required fact" / "= test"."""
    if config == "A":
        return _essay(rng, 6 + rng.randint(0, 3))
    if config == "B":
        return "\n".join(f"- What about {rng.choice(_TOPICS)}?" for _ in range(3))
    lines: list[str] = []
    preserve = config.startswith("C") and rng.random() < 0.85
    if config.startswith("C"):
        if not preserve:
            lines += [_essay(rng, 2), ""]
        lines += [f"Status: open; the question about {rng.choice(_TOPICS)} is kept open.", ""]
    lines += [f"- How far did {rng.choice(_TOPICS)} matter?" for _ in range(rng.randint(1, 3))]
    lines += [f"* {_claim(rng)}" for _ in range(rng.randint(1, 3))]
    if asked:
        lines.append(f"> returned to: {asked[-1]}")
    if preserve:
        lines += ["? A count of editions per city for 1517-1520.", "= the count explains the speed"]
    return "\n".join(lines)


def make_run(
    path: str | Path, config: str, *, seed: int = 0, sessions: int = 5, name: str | None = None
) -> Path:
    """Create a ledger at ``path`` with ``sessions`` committed sessions of made-up text."""
    if config not in CONFIGS:
        raise ValueError(f"unknown configuration {config!r}")
    rng = random.Random(f"{config}/{seed}")
    p = Path(path)
    meta = RunMeta(name=name or p.name, seed=SEED_QUESTION, config=config, contract="pilot-01")
    led = Ledger.create(p, meta)
    asked: list[str] = []
    try:
        for n in range(1, sessions + 1):
            rendering = "" if config in NO_STORE_CONFIGS else led.rendering(n)
            with led.batch(n) as b:
                b.emit(SessionStarted(config=config))
                if config not in NO_STORE_CONFIGS:
                    live = [nid for nid, nd in b.raw_nodes().items() if nd["status"] == "open"]
                    focus = rng.choice(live) if live else None
                    if focus:
                        b.emit(QuestionResurfaced(how="voluntary"), node=focus, actor="model")
                        b.emit(FactAttached(text=_claim(rng)), node=focus, actor="model")
                    for _ in range(rng.randint(1, 2)):
                        q = f"How far did {rng.choice(_TOPICS)} shape the outcome?"
                        b.create_node(q, parent=focus, origin="new_question", actor="model")
                        asked.append(q)
                    if config.startswith("C") and focus:
                        rc = ReturnConditionSet(
                            required_facts=[RequiredFact(id="r1", text=_EDITIONS)],
                            required_actions=["compare with Catholic output"],
                            closure_test="the count explains the speed",
                        )
                        b.emit(rc, node=focus, actor="model")
                        kept = CandidatePreserved(text=_essay(rng, 1), delta=-0.2)
                        b.emit(kept, node=focus, actor="model")
                rec = SessionRecord(
                    session=n,
                    config=config,
                    inputs={"rendering": rendering},
                    output_text=_output(rng, config, n, asked),
                )
                b.record_session(rec)
                b.snapshot("session")
    finally:
        led.close()
    return p


def make_run_dir(
    root: str | Path, *, runs_per_config: int = 3, configs: tuple[str, ...] = CONFIGS
) -> Path:
    """Create ``runs_per_config`` runs of each configuration under ``root``."""
    r = Path(root)
    r.mkdir(parents=True, exist_ok=True)
    for config in configs:
        for i in range(runs_per_config):
            slug = config.replace("+", "plus").replace("-", "_")
            make_run(r / f"{slug}_r{i}", config, seed=i)
    return r


def hand_made_materials(n_per_config: int = 1, configs: tuple[str, ...] = CONFIGS) -> list:  # type: ignore[type-arg]
    """Small fixed :class:`~curiosity_tui.packs.build.RunMaterial` list (no ledger needed)."""
    from curiosity_tui.packs.build import RunMaterial

    out = []
    for config in configs:
        for i in range(n_per_config):
            store = config not in NO_STORE_CONFIGS
            out.append(
                RunMaterial(
                    run=f"run-{config}-{i}",
                    ledger=f"/nowhere/run-{config}-{i}",
                    config=config,
                    first_output=(
                        f"The first session of run {i} argued that cheap pamphlets spread fast. "
                        "Wittenberg presses issued about 400 editions in 1520."
                    ),
                    later_input=(
                        "- Why did pamphlets spread so fast?\n    * Presses existed in over 200 towns.\n\n"
                        "- How did reprints travel between cities?"
                        if store
                        else ""
                    ),
                    later_output=(
                        "Reprints travelled along trade routes within weeks. "
                        "Nuremberg produced roughly 40-50% of the earliest pamphlets. "
                        f"This line of inquiry, number {i}, still needs a count of editions."
                    ),
                )
            )
    return out
