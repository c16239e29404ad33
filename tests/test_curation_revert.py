"""Curator actions can be taken back between sessions (decision 444): a ``curator_reverted``
event with actor and reason restores what the action changed; the journal stays
append-only, the ledger verifies, and a later action is taken back first."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger import Ledger, curation
from curiosity_tui.ledger.curation_revert import curator_actions, revert
from curiosity_tui.offline.synthetic_ledgers import make_run

ANN = "human:ann"


@pytest.fixture
def led(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = make_run(tmp_path / "run", "C+cur", seed=3, sessions=2)
    with Ledger.open(path, write=True) as led:
        yield led


def _last(led: Ledger) -> int:
    """The journal seq of the latest curator action (its batch's marker follows it)."""
    return curator_actions(led)[-1].seq


def _two_open(led: Ledger) -> tuple[str, str]:
    ids = sorted(
        (n["id"] for n in led.raw_nodes().values() if n["status"] == "open" and n["id"] != "q1"),
        key=lambda x: int(x[1:]),
    )
    assert len(ids) >= 2, ids
    return ids[0], ids[1]


def test_a_merge_taken_back_and_redone(led: Ledger) -> None:
    a, b = _two_open(led)
    lines_before = (led.path / "journal.jsonl").read_text().count("\n")
    curation.merge(led, a, "q1", "looked like the root", ANN)
    merge_seq = _last(led)
    assert led.raw_nodes()[a]["status"] == "merged"
    act = revert(led, merge_seq, "wrong target: q1 is the root question", ANN)
    assert act.action == "merge" and act.value == "q1"
    node = led.raw_nodes()[a]
    assert node["status"] == "open" and node["merged_into"] is None
    curation.merge(led, a, b, "same question as its sibling", ANN)
    assert led.raw_nodes()[a]["merged_into"] == b
    acts = {x.seq: x for x in curator_actions(led)}
    assert acts[merge_seq].reverted_by is not None and acts[merge_seq].reverted_by > merge_seq
    events = (led.path / "journal.jsonl").read_text().splitlines()
    assert len(events) > lines_before  # appended, never rewritten
    reverted = [e for e in events if '"curator_reverted"' in e]
    assert len(reverted) == 1 and '"actor":"human:ann"' in reverted[0].replace(" ", "")
    assert led.verify().ok


def test_priority_archive_and_revive_taken_back(led: Ledger) -> None:
    a, b = _two_open(led)
    curation.set_priority(led, a, 2, "first things first", ANN)
    p1 = _last(led)
    curation.set_priority(led, a, 1, "even more first", ANN)
    p2 = _last(led)
    with pytest.raises(TransitionError, match="take back the later action first"):
        revert(led, p1, "undo the first", ANN)
    revert(led, p2, "too eager", ANN)
    assert led.raw_nodes()[a]["curator_priority"] == 2
    revert(led, p1, "no priority after all", ANN)
    assert led.raw_nodes()[a]["curator_priority"] is None
    curation.archive(led, b, "off topic", ANN)
    arch = _last(led)
    revert(led, arch, "it is on topic", ANN)
    assert led.raw_nodes()[b]["status"] == "open"
    curation.archive(led, b, "off topic after all", ANN)
    curation.revive(led, b, "needed again", ANN)
    rev = _last(led)
    revert(led, rev, "not needed", "model-curator")
    assert led.raw_nodes()[b]["status"] == "archived"
    assert led.verify().ok


def test_refusals_name_the_problem(led: Ledger) -> None:
    a, _ = _two_open(led)
    with pytest.raises(TransitionError, match="seq 1 is not a curator action"):
        revert(led, 1, "nothing", ANN)
    curation.archive(led, a, "off topic", ANN)
    seq = _last(led)
    with pytest.raises(TransitionError, match="needs a reason"):
        revert(led, seq, "  ", ANN)
    with pytest.raises(TransitionError, match="model-curator or human"):
        revert(led, seq, "why not", "model")
    revert(led, seq, "on topic", ANN)
    by = curator_actions(led)[-1].reverted_by
    with pytest.raises(TransitionError, match=f"already taken back at seq {by}"):
        revert(led, seq, "again", ANN)


def test_the_reverted_state_survives_a_reopen(led: Ledger, tmp_path: Path) -> None:
    a, b = _two_open(led)
    curation.merge(led, a, b, "duplicate", ANN)
    revert(led, _last(led), "not a duplicate", ANN)
    path = led.path
    led.close()
    with Ledger.open(path) as again:
        assert again.raw_nodes()[a]["status"] == "open"
        assert again.verify().ok
