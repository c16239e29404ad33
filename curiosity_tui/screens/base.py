"""What every screen of the app shares: palette commands derived from its bindings."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen


def binding_commands(node: Screen, bindings: Iterable[object]) -> Iterable[SystemCommand]:
    """One palette entry per described binding: title = description, help = key and id."""
    for b in bindings:
        if not isinstance(b, Binding) or not b.description:
            continue
        action = b.action

        def run(action: str = action) -> object:
            return node.run_action(action)

        try:
            key = b.key_display or node.app.get_key_display(b)
        except Exception:  # noqa: BLE001 - display only
            key = b.key.split(",")[0]
        yield SystemCommand(b.description, f"key {key} · id {b.id or '-'}", run)


class AppScreen(Screen):
    """A screen whose bindings all show up in the command palette."""

    def palette_commands(self) -> Iterable[SystemCommand]:
        return binding_commands(self, self.BINDINGS)
