"""The full app: workspace, ledger browser, curator, downgrades, audit, run monitor, analysis.

Build it with :func:`make_app` (the CLI does; tests do too, without the CLI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curiosity_tui.app import screen_registry as screens
from curiosity_tui.app.base import SHELL_CSS, TABLES_CSS, AppBase, env_keymap


class CuriosityApp(AppBase):
    """Workspace, ledger browser, curator, downgrades, audit, run monitor."""

    TITLE = "curiosity-tui"
    CSS_PATH = [SHELL_CSS, TABLES_CSS]

    def __init__(
        self,
        workspace: Path,
        *,
        ledger: Path | None = None,
        keymap: dict[str, str] | None = None,
        theme: str | None = None,
        curator_name: str | None = None,
        run: Any = None,
    ) -> None:
        super().__init__(keymap=keymap, theme=theme)
        self.workspace = Path(workspace).resolve()
        self.initial_ledger = Path(ledger) if ledger else None
        self.curator_name = curator_name
        self.run_request = run
        self.sub_title = self.workspace.name or str(self.workspace)

    def open_home(self) -> None:
        WorkspaceScreen = screens.workspace()
        self.push_screen(WorkspaceScreen(self.workspace))
        if self.run_request is not None:
            RunMonitorScreen = screens.monitor()
            self.push_screen(RunMonitorScreen(self.run_request))
        elif self.initial_ledger is not None:
            self.open_ledger(self.initial_ledger)

    async def action_quit(self) -> None:
        RunMonitorScreen = screens.monitor()
        for screen in self.screen_stack:
            if isinstance(screen, RunMonitorScreen):
                screen.cancel()
        self.exit()


def make_app(workspace: Path | str, **opts: Any) -> CuriosityApp:
    """Build the app for ``workspace``.

    Options: ``ledger`` (open this ledger's browser at once), ``keymap`` (binding id -> keys;
    merged over the file named by ``CURIOSITY_TUI_KEYMAP``), ``theme``, ``curator_name``,
    ``run`` (a run request for the run monitor / curator).
    """
    keymap = env_keymap(opts.pop("keymap", None))
    return CuriosityApp(Path(workspace), keymap=keymap, **opts)
