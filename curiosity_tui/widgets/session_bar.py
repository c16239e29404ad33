"""The session slider: which point of the run the browser shows, and what changed there."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from curiosity_tui.ledger.view import Position


class SessionBar(Static):
    DEFAULT_CSS = """
    SessionBar { height: 1; padding: 0 1; background: $boost; }
    """

    def show(
        self,
        positions: list[Position],
        index: int,
        last_session: int,
        new: int,
        changed: int,
    ) -> None:
        t = Text(no_wrap=True, end="")
        t.append("session ", style="bold")
        t.append("◀ [ " if index > 0 else "  [ ", style="dim")
        for i, pos in enumerate(positions):
            name = "now" if pos.session is None else f"s{pos.session}"
            if i == index:
                t.append(f"▸{name}◂", style="bold reverse")
            else:
                t.append(f" {name} ", style="dim")
            t.append(" ")
        t.append("] ▶" if index < len(positions) - 1 else "]  ", style="dim")
        t.append("  ")
        t.append(positions[index].label(last_session))
        t.append(f"  ·  {new} new, {changed} changed", style="bold" if new or changed else "dim")
        self.update(t)
