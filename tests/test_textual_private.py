"""widgets/textual_private.py: each private part of Textual the package reads, tested so that a
Textual release that changes it fails here (rather than a burst of keys landing out of order,
or a scheme's category keys doing nothing, in front of a rater)."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, OptionList, TextArea

from curiosity_tui.widgets.ordered import OrderedInput, OrderedOptionList, OrderedTextArea
from curiosity_tui.widgets.textual_private import add_priority_binding, own_bindings


def _actions(bindings: tuple[Binding, ...]) -> list[str]:
    return [b.action for b in bindings]


def test_own_bindings_are_the_widget_classes_own_key_bindings() -> None:
    """The map read is the one Textual merges from the classes' ``BINDINGS``: Input's
    backspace, TextArea's cursor keys, OptionList's down; nothing for an unbound key."""
    assert _actions(own_bindings(OrderedInput(), "backspace")) == ["delete_left"]
    assert _actions(own_bindings(Input(), "home")) == ["home"]
    assert _actions(own_bindings(OrderedTextArea(), "left")) == ["cursor_left"]
    assert _actions(own_bindings(OptionList(), "down")) == ["cursor_down"]
    assert own_bindings(TextArea(), "f13") == ()


class _Form(Screen[None]):
    """A category list and a grounds field; the key "1" picks and moves to the field."""

    def __init__(self, focus: str) -> None:
        super().__init__()
        self.picked: list[str] = []
        self.start = focus
        add_priority_binding(self, "1", "pick('1')", "q1: first")

    def compose(self) -> ComposeResult:
        yield OrderedOptionList("first", "second", id="categories")
        yield OrderedInput(id="grounds")

    def on_mount(self) -> None:
        self.set_focus(self.query_one(f"#{self.start}"))

    def action_pick(self, key: str) -> None:
        self.picked.append(key)
        self.set_focus(self.query_one(OrderedInput))


class _FormApp(App[None]):
    def __init__(self, focus: str = "grounds") -> None:
        super().__init__()
        self.start = focus

    def on_mount(self) -> None:
        self.push_screen(_Form(self.start))


async def test_keys_typed_in_a_burst_edit_in_order() -> None:
    """Characters and backspaces typed in one burst land in the order typed (the widget runs
    its own backspace binding, looked up with ``own_bindings``, in its own task)."""
    app = _FormApp()
    async with app.run_test() as pilot:
        await pilot.pause()
        field = app.screen.query_one(OrderedInput)
        await pilot.press("a", "b", "c", "backspace", "backspace", "d", "e", "left", "x")
        await pilot.pause()
        assert field.value == "adxe"


async def test_a_binding_added_at_run_time_runs_before_the_keys_typed_after_it() -> None:
    """The screen's own priority binding: "1" picks and moves focus to the grounds before
    the rest of the burst is read, so "ok" lands in the grounds."""
    app = _FormApp(focus="categories")
    async with app.run_test() as pilot:
        await pilot.pause()
        form: Any = app.screen
        active = form.active_bindings["1"]
        assert active.binding.priority and not active.binding.show
        assert active.binding.description == "q1: first"
        await pilot.press("down", "1", "o", "k")
        await pilot.pause()
        assert form.picked == ["1"]
        assert form.query_one(OrderedInput).value == "ok"
        assert form.query_one(OrderedOptionList).highlighted == 1
