"""One form base (issue 22 item 3): the four forms take their submit, leave and step keys and
their stepping from screens/form_base.py; their Pilot tests and snapshots hold the behaviour."""

from __future__ import annotations

import pytest
from textual.binding import Binding

from curiosity_tui.screens.adjudication import AdjudicationScreen
from curiosity_tui.screens.decide import DecideScreen
from curiosity_tui.screens.form_base import FormSteps, leave_key, step_keys, submit_key
from curiosity_tui.screens.human_session import HumanSessionScreen
from curiosity_tui.screens.reason import ReasonScreen

#: form -> (id namespace, submit action, leave action, leave description)
FORMS = {
    DecideScreen: ("decide", "submit", "cancel", "Cancel"),
    ReasonScreen: ("form", "submit", "cancel", "Cancel"),
    AdjudicationScreen: ("adjudication", "save", "back", "Back"),
    HumanSessionScreen: ("human", "submit", "back", "Back"),
}


def _shape(b: Binding) -> tuple[object, ...]:
    return (b.key, b.action, b.description, b.id, b.priority, b.show)


@pytest.mark.parametrize("form", list(FORMS), ids=lambda c: c.__name__)
def test_a_form_steps_and_keys_come_from_the_base(form: type) -> None:
    ns, submit, leave, says = FORMS[form]
    assert issubclass(form, FormSteps)
    assert "action_step" not in vars(form), "the form steps by itself again"
    own = {b.id: _shape(b) for b in form.BINDINGS if isinstance(b, Binding)}
    wanted = [submit_key(ns, submit), leave_key(ns, leave, says), *step_keys(ns)]
    for b in wanted:
        assert own.get(b.id) == _shape(b), b.id


def test_the_keys_are_what_the_forms_bound_before() -> None:
    assert _shape(submit_key("decide")) == (
        "ctrl+s",
        "submit",
        "Submit",
        "decide.submit",
        True,
        True,
    )
    assert [_shape(b) for b in step_keys("human")] == [
        ("tab", "step(1)", "Next field", "human.tab", True, False),
        ("shift+tab", "step(-1)", "Previous field", "human.backtab", True, False),
    ]
    assert _shape(leave_key("adjudication", "back", "Back")) == (
        "escape",
        "back",
        "Back",
        "adjudication.back",
        True,
        True,
    )
