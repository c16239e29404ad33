"""NodeTexts (decision 245): a writer's node texts re-encode only appended list items, and are
byte-identical to ``journal.canonical`` whatever happened to the lists in between."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import FactAttached
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.ledger.node_text import MIN_KEPT, NodeTexts
from curiosity_tui.ledger.replay import verify

ODD = ["", "é", '"quoted"', "back\\slash", "\n\t", "\u2028", "facts", '"facts":[]', "z" * 50]


def _value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(7 if depth < 2 else 4)
    if pick == 0:
        return rng.choice(ODD)
    if pick == 1:
        return rng.randint(-5, 10**6)
    if pick == 2:
        return rng.choice([None, True, False, 0.5, -1e-9])
    if pick == 3:
        return rng.choice(ODD) + str(rng.random())
    if pick == 4:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    keys = ["facts", "checks", "a", "zz", "text", "é"]
    return {rng.choice(keys): _value(rng, depth + 1) for _ in range(rng.randrange(3))}


def _node(rng: random.Random, nid: str) -> dict[str, Any]:
    node: dict[str, Any] = {"id": nid}
    for key in ("text", "status", "parent", "aa", "closure", "zeta", "evidence", "d"):
        if rng.random() < 0.7:
            node[key] = _value(rng)
    for key in ("facts", "checks", "preserved"):
        if rng.random() < 0.8:
            node[key] = [_value(rng) for _ in range(rng.randrange(MIN_KEPT * 2))]
    return node


def test_texts_equal_canonical_through_appends_and_rewrites() -> None:
    rng = random.Random(14)
    texts = NodeTexts()
    nodes = {f"q{i}": _node(rng, f"q{i}") for i in range(1, 30)}
    hits = 0
    for _step in range(3000):
        nid = rng.choice(list(nodes))
        node = dict(nodes[nid])  # copy-on-write: lists copied, items shared
        for key in ("facts", "checks", "preserved"):
            if key in node:
                node[key] = list(node[key])
        move = rng.randrange(8)
        key = rng.choice(("facts", "checks", "preserved"))
        if move <= 3 and key in node:  # the usual case: append
            node[key].extend(_value(rng) for _ in range(rng.randrange(1, 4)))
        elif move == 4 and key in node and node[key]:  # an item replaced by an equal copy
            i = rng.randrange(len(node[key]))
            node[key][i] = jr.canonical(node[key][i]) if rng.random() < 0.5 else _value(rng)
        elif move == 5 and key in node and node[key]:  # shortened (an aborted batch's view)
            node[key] = node[key][: rng.randrange(len(node[key]))]
        elif move == 6:  # a small field changed
            node[rng.choice(("text", "status", "zeta", "aa"))] = _value(rng)
        else:  # reordered
            if key in node:
                rng.shuffle(node[key])
        if rng.random() < 0.2:
            node.pop(rng.choice(("facts", "checks", "preserved", "text")), None)
        nodes[nid] = node
        before = len(texts._lists)
        assert texts.text(node) == jr.canonical(node)
        hits += len(texts._lists) == before
    assert hits > 0  # entries were reused, not only rebuilt


def test_a_stale_entry_is_never_used() -> None:
    texts = NodeTexts()
    items = [{"text": f"f{i}"} for i in range(MIN_KEPT + 2)]
    node = {"id": "q1", "facts": items, "text": "t"}
    assert texts.text(node) == jr.canonical(node)
    swapped = {"id": "q1", "facts": [{"text": "other"}, *items[1:]], "text": "t"}
    assert texts.text(swapped) == jr.canonical(swapped)
    shorter = {"id": "q1", "facts": items[:-1], "text": "t"}
    assert texts.text(shorter) == jr.canonical(shorter)
    appended = {"id": "q1", "facts": [*items[:-1], {"text": "new"}], "text": "t"}
    assert texts.text(appended) == jr.canonical(appended)


def test_a_long_ledger_written_with_the_cache_verifies(tmp_path: Path) -> None:
    """Node rows and snapshot rows written from cached texts equal a replay's, byte for byte
    (verify compares both), across compaction-free appends, an aborted batch and a reopen."""
    path = tmp_path / "l"
    led = Ledger.create(path, RunMeta(name="l", seed="seed question", config="C-cur"))
    for t in range(1, 40):
        if t == 20:
            led.close()
            led = Ledger.open(path, write=True)
        with led.batch(t) as b:
            for i in range(3):
                b.emit(FactAttached(text=f'fact {t}.{i} é "x"'), node="q1", actor="model")
            if t % 5 == 0:
                b.create_node(f"question {t}", parent="q1", origin="new_question", actor="model")
            b.snapshot("session")
            b.snapshot("decay")
        if t == 30:  # a batch that grows q1 and is then abandoned leaves the cache stale
            try:
                with led.batch(t + 1) as b:
                    b.emit(FactAttached(text="never committed"), node="q1", actor="model")
                    b.snapshot("session")
                    raise RuntimeError("abandon")
            except RuntimeError:
                pass
    facts = len(led.raw_nodes()["q1"]["facts"])
    led.close()
    report = verify(path)
    assert report.ok, report.problem
    assert facts == 39 * 3 and facts > MIN_KEPT * 4
    assert "never committed" not in (path / "journal.jsonl").read_text(encoding="utf-8")
