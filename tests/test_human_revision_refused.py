"""A person's form refuses what the ledger cannot take (issue 28, item 10; decision 225): a
return condition with only required actions and a closure test would not revise the focus's
current one — it was dropped without a word, and the next input still showed the old closure
test. The commit now refuses it by name and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from human_fixtures import build_after_model_session, copy_ledger

from curiosity_tui.errors import InputError
from curiosity_tui.ledger import Ledger
from curiosity_tui.protocol.human_session import (
    HumanDeliverable,
    check_human_deliverable,
    commit_human_session,
    human_session_input,
)
from curiosity_tui.protocol.schemas import (
    DeliverableResponse,
    NewQuestion,
    OpenLayer,
    ReturnConditionProposal,
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_after_model_session(tmp_path_factory.mktemp("human-rc") / "relay")


def _preserve(focus: str, facts: list[str], actions: list[str], test: str) -> HumanDeliverable:
    return HumanDeliverable(
        decision="PRESERVE",
        reason="the comparison is still missing",
        deliverable=DeliverableResponse(
            answer=None,
            actions=[],
            new_questions=[],
            open_layer=OpenLayer(
                node_status="one city counted",
                living_questions=[NewQuestion(text="Was Augsburg different?", parent=focus)],
                return_condition=ReturnConditionProposal(
                    required_facts=facts, required_actions=actions, closure_test=test
                ),
            ),
            facts=[],
            checks=[],
            downgrade_proposals=[],
        ),
    )


def test_actions_and_a_closure_test_alone_are_refused_not_dropped(
    base: Path, tmp_path: Path
) -> None:
    path = copy_ledger(base, tmp_path / "relay")
    with Ledger.open(path, write=True) as led:
        inp = human_session_input(led, 2)
        assert inp.requirements  # the focus has a return condition to revise
        hd = _preserve(inp.focus, [], ["visit the Augsburg archive"], "two cities compared")
        problems = check_human_deliverable(inp, hd)
        assert len(problems) == 1 and "cannot revise" in problems[0]
        assert "list the required facts too" in problems[0]
        before = len(list(led.events()))
        with pytest.raises(InputError, match="cannot revise") as err:
            commit_human_session(led, 2, "alice", hd)
        assert "\n" not in str(err.value)
        assert len(list(led.events())) == before  # nothing written; the form asks again
        ok = _preserve(inp.focus, ["a second city's count"], ["visit the archive"], "compared")
        assert check_human_deliverable(inp, ok) == []
        empty = _preserve(inp.focus, [], [], "")
        assert not any("cannot revise" in p for p in check_human_deliverable(inp, empty))
