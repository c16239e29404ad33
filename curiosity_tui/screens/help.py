"""The help screen (``?``): every key of the screen below, with its binding id."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from curiosity_tui.screens.base import help_title

ABOUT = (
    "q quits, ? and esc close this help. Keys can be remapped by binding id: set "
    "CURIOSITY_TUI_KEYMAP to a TOML file with a [keymap] table, e.g. "
    '"browser.next_session" = "n"  (docs/keys.md lists every id). ctrl+p opens the command '
    "palette, which lists every action of the current screen (and themes)."
)


class HelpScreen(ModalScreen[None]):
    HELP_TITLE = "Help"
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90; max-width: 95%; height: 80%; border: round $accent;
        background: $surface; padding: 0 1; }
    """
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close"),
    ]

    def __init__(self, target: Screen) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(self._table(), id="help-body")

    def _table(self) -> Table:
        title = help_title(self.target)
        purpose = getattr(self.target, "HELP", "")
        table = Table(
            title=Text(str(title), style="bold"), expand=True, box=None, caption=Text(ABOUT)
        )
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("does")
        table.add_column("id", style="dim", no_wrap=True)
        if purpose:
            table.add_row("", Text(purpose, style="italic"), "")
        seen: set[tuple[str, str]] = set()
        groups: list[list[tuple[Text, Text, Text]]] = [[], [], []]
        for _key, active in self.target.active_bindings.items():
            b = active.binding
            if not b.description or (b.action, b.description) in seen:
                continue
            seen.add((b.action, b.description))
            shown = b.key_display or self.app.get_key_display(b)
            group = 0 if active.node is self.target else (2 if active.node is self.app else 1)
            groups[group].append((Text(shown), Text(b.description), Text(b.id or "")))
        for i, rows in enumerate(groups):
            if i and rows:
                table.add_row("", Text(("", "this pane", "everywhere")[i], style="dim italic"), "")
            for row in rows:
                table.add_row(*row)
        return table

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
