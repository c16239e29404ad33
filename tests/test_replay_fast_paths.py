"""Replay's fast paths give exactly what the slow ones give (decision 215): the pure-Python
data pre-check only vouches for data pydantic accepts unchanged, the incremental node hasher
equals the canonical node hash, the cached state hash follows every change, and the JSON
parser and canonical encoder agree with the json module byte for byte."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from ledger_builders import build
from pydantic import ValidationError

from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import EVENT_KINDS
from curiosity_tui.ledger.fastcheck import data_checker
from curiosity_tui.ledger.hashing import HashIndex, NodeHasher, node_hash
from curiosity_tui.ledger.replay import _CHECKERS, replay

GOOD: dict[str, dict[str, Any]] = {
    "fact_attached": {"text": "a fact", "source": None},
    "question_resurfaced": {"how": "voluntary"},
    "snapshot_written": {"stage": "decay", "state_hash": "0" * 64, "node_count": 3},
    "node_created": {"text": "q?", "parent": "q1", "origin": "self_ask"},
    "decay_applied": {"nodes": ["q2", "q3"]},
    "candidate_preserved": {"text": "maybe", "delta": 0.5},
    "curator_priority_set": {"priority": None, "reason": "r"},
}

BAD: list[tuple[str, dict[str, Any]]] = [
    ("fact_attached", {"text": 3}),
    ("fact_attached", {"source": None}),  # required text missing
    ("fact_attached", {"text": "x", "extra": 1}),
    ("question_resurfaced", {"how": "sometimes"}),
    ("snapshot_written", {"stage": "session", "state_hash": "x", "node_count": True}),
    ("decay_applied", {"nodes": ["q2", 7]}),
    ("decay_applied", {"nodes": "q2"}),
    ("candidate_preserved", {"text": "t", "delta": "0.5"}),
    ("node_created", {"text": "q", "origin": None}),
]


def _pydantic_accepts(kind: str, data: Any) -> bool:
    try:
        EVENT_KINDS[kind].schema.__pydantic_validator__.validate_python(data)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_plain_kinds_are_vouched_for(kind: str) -> None:
    check = _CHECKERS[kind]
    assert check(GOOD[kind]) and _pydantic_accepts(kind, GOOD[kind])


@pytest.mark.parametrize(("kind", "data"), BAD)
def test_the_pre_check_never_vouches_for_bad_data(kind: str, data: dict[str, Any]) -> None:
    assert not _CHECKERS[kind](data)
    # some of these pydantic would coerce or refuse: either way pydantic decides, not us


def test_random_data_vouched_for_is_always_accepted() -> None:
    rng = random.Random(215)
    values: list[Any] = [None, "", "q2", "voluntary", "session", 0, 3, -1, 2.5, True, [], ["q1"]]
    values += [[1], {}, {"a": 1}, "forced_focus", "decay", "new_question"]
    vouched = 0
    for _ in range(4000):
        kind = rng.choice(sorted(_CHECKERS))
        names = list(EVENT_KINDS[kind].schema.model_fields) + ["extra"]
        data = {n: rng.choice(values) for n in names if rng.random() < 0.7}
        if _CHECKERS[kind](data):
            vouched += 1
            assert _pydantic_accepts(kind, data), (kind, data)
    assert vouched > 50


def test_models_that_are_not_plain_get_no_checker() -> None:
    assert data_checker(EVENT_KINDS["session_recorded"].schema) is None  # nested, validators
    assert data_checker(EVENT_KINDS["return_condition_set"].schema) is None  # nested models
    assert "ledger_created" not in _CHECKERS


def test_incremental_node_hash_equals_the_canonical_hash() -> None:
    hasher = NodeHasher()
    node: dict[str, Any] = {
        "id": "q2",
        "checks": [],
        "facts": [],
        "status": "open",
        "resurfaced": [],
        "text": "é and \u2028",
    }
    for step in range(30):
        if step % 3 == 0:
            node["facts"].append({"text": f"fact {step}", "session": step, "source": None})
        if step % 4 == 0:
            node["resurfaced"] = [*node["resurfaced"], step]
        if step % 7 == 0:  # a field before "facts" changes: the kept state is dropped
            node["checks"].append({"session": step})
        if step == 20:  # the facts list replaced (not appended to)
            node["facts"] = [{"text": "new list", "session": 20, "source": None}]
        assert hasher.digest(node) == node_hash(node), step


def test_cached_state_hash_follows_every_change() -> None:
    index = HashIndex({"q1": "a" * 64, "q2": "b" * 64})
    first = index.digest()
    assert index.digest() == first
    index.set("q2", "c" * 64)
    assert index.digest() != first
    index.set("q2", "b" * 64)
    assert index.digest() == first
    index.set("q5", "d" * 64)
    index.set("q3", "e" * 64)  # out of order: the digest sorts first
    fresh = HashIndex(index.as_dict())
    assert index.digest() == fresh.digest()
    assert index.copy().digest() == fresh.digest()


def test_replay_with_and_without_kept_snapshots_agree(tmp_path: Path, clock: Any) -> None:
    build(tmp_path / "l", 6, clock=clock).close()
    fast = replay(tmp_path / "l")
    kept = replay(tmp_path / "l", keep_snapshots=True)
    assert fast.hashes.as_dict() == kept.hashes.as_dict()
    assert fast.snapshots == kept.snapshots > 0
    assert {k: node_hash(v) for k, v in fast.state.nodes.items()} == fast.hashes.as_dict()


@pytest.mark.parametrize(
    "blob",
    [
        b'[{"a":1,"a":2}]',
        b"[NaN, Infinity, -Infinity, 1e400, -0.0, 5e-324, 123456789012345678901234567890]",
        b'["\\ud800", "\\ud83d\\ude00", "\\u0000", "\xc3\xa9"]',
    ],
)
def test_parser_gives_what_json_gives(blob: bytes) -> None:
    lines = blob[1:-1].split(b", ") if b", " in blob else [blob[1:-1]]
    parsed = jr._parse_all(lines)
    assert repr(parsed) == repr(json.loads(b"[" + b",".join(lines) + b"]"))


def test_unparseable_lines_are_none() -> None:
    assert jr._parse_all([b'{"a":1}', b"[1,]"]) is None
    assert jr._parse_all([b'"\xff"']) is None


def test_canonical_is_json_dumps() -> None:
    rng = random.Random(7)
    atoms: list[Any] = [None, True, False, 0, -3, 2.5, float("inf"), "", "é", "\u2028\x00\n", "a/b"]
    for _ in range(300):
        obj: Any = rng.choice(atoms)
        for _ in range(rng.randrange(4)):
            obj = rng.choice([[obj, rng.choice(atoms)], {"k": obj, "b": rng.choice(atoms), "1": 1}])
        want = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert jr.canonical(obj) == want


def test_field_and_fact_encoders_write_what_json_writes() -> None:
    from curiosity_tui.ledger.fieldtext import encode_items, encode_value

    rng = random.Random(251)
    scalars: list[Any] = ["", 'a"b', "x\\y", "\n\t\x01\x7f\u2028", "é€😀", None, 3, -5, True]
    scalars += [2**70, 1.5, 1e16, 1e-7]
    for _ in range(4000):
        items: list[Any] = []
        for _ in range(rng.randint(0, 4)):
            keys = rng.sample(["session", "source", "text", "other"], rng.randint(0, 4))
            fact = {k: rng.choice(scalars) for k in keys}
            items.append(fact if rng.random() < 0.9 else rng.choice(scalars))
        assert encode_items(items) == jr.canonical(items)[1:-1], items
        ints = [rng.choice([0, 7, -3, 2**64, True, False, 1.0]) for _ in range(rng.randint(0, 5))]
        assert encode_value(ints) == jr.canonical(ints), ints


def test_field_texts_follow_the_stale_fields() -> None:
    from curiosity_tui.ledger.fieldtext import ALL_FIELDS

    rng = random.Random(2510)
    hasher = NodeHasher()
    node: dict[str, Any] = {
        "id": "q1",
        "facts": [],
        "resurfaced": [],
        "status": "open",
        "checks": [],
        "text": "t",
    }
    assert hasher.digest(node, ALL_FIELDS) == node_hash(node)
    for step in range(300):
        change = rng.choice(["fact", "resurfaced", "status", "checks", "new"])
        stale: set[str] = set()
        if change == "fact":
            node["facts"].append({"text": f"f{step}", "session": step, "source": None})
        elif change == "resurfaced":  # mostly grows at its end, by an int
            extra = rng.choice([step, step, step, -step, True, 2**70 + step, float(step)])
            node["resurfaced"] = sorted([*node["resurfaced"], extra])
            stale.add("resurfaced")
        elif change == "status":
            node["status"] = rng.choice(["open", "dormant", "closed"])
            stale.add("status")
        elif change == "checks":
            node["checks"].append({"n": step, "ok": rng.random() < 0.5})  # in place
            stale.add("checks")
        else:
            node[f"extra{step}"] = step  # a field the node did not have
            stale.add(f"extra{step}")
        assert hasher.digest(node, stale) == node_hash(node), (step, change)
