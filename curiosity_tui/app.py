"""The Textual app: a thin shell over the domain layers.

Build it with :func:`make_app` (the CLI does; tests do too, without the CLI). Screens live
one per file in :mod:`curiosity_tui.screens`, reusable widgets in :mod:`curiosity_tui.widgets`;
they call domain modules (``ledger``, ``contract``, ``workspace``, ``ledger_view`` …) which never
import textual.

Every binding has an ``id`` so keys can be remapped: pass ``keymap={"browser.next": "n"}`` or
point ``CURIOSITY_TUI_KEYMAP`` at a TOML file with a ``[keymap]`` table of id = "key".
The command palette (ctrl+p) offers the app's commands plus those of the current screen
(each screen lists them in ``palette_commands``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

CSS = """
Screen { layout: vertical; }
.pane-title { height: 1; padding: 0 1; background: $panel; color: $text; text-style: bold; }
.hint { height: auto; padding: 0 1; color: $text-muted; }
DataTable { height: 1fr; }
#filter { display: none; }
#filter.visible { display: block; }
"""


def load_keymap(path: str | Path | None) -> dict[str, str]:
    """A ``[keymap]`` table (binding id = "keys") from a TOML file; {} when there is none."""
    if not path:
        return {}
    p = Path(path).expanduser()
    if not p.is_file():
        return {}
    import tomllib

    with p.open("rb") as fh:
        data = tomllib.load(fh)
    table = data.get("keymap", data)
    return {str(k): str(v) for k, v in table.items() if isinstance(v, str)}


class CuriosityApp(App[None]):
    """Workspace, ledger browser, curator, downgrades, audit, run monitor."""

    TITLE = "curiosity-tui"
    CSS = CSS
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", show=False, id="app.quit", priority=True),
        Binding("ctrl+b", "back", "Back", show=False, id="app.back"),
    ]

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
        super().__init__()
        self.workspace = Path(workspace).resolve()
        self.initial_ledger = Path(ledger) if ledger else None
        self.curator_name = curator_name
        self.run_request = run
        self._keymap = dict(keymap or {})
        if theme:
            self.theme = theme
        self.sub_title = self.workspace.name or str(self.workspace)

    def on_mount(self) -> None:
        if self._keymap:
            self.set_keymap(self._keymap)
        from curiosity_tui.screens.workspace import WorkspaceScreen

        self.push_screen(WorkspaceScreen(self.workspace))
        if self.run_request is not None:
            from curiosity_tui.screens.monitor import RunMonitorScreen

            self.push_screen(RunMonitorScreen(self.run_request))
        elif self.initial_ledger is not None:
            self.open_ledger(self.initial_ledger)

    # -- navigation used by screens ---------------------------------------------------
    def open_ledger(self, path: Path, node: str | None = None) -> None:
        from curiosity_tui.screens.browser import BrowserScreen

        self.push_screen(BrowserScreen(Path(path), node=node))

    def open_pack(self, path: Path) -> None:
        from curiosity_tui.screens.pack_open import PackOpenScreen

        self.push_screen(PackOpenScreen(Path(path)))

    def action_back(self) -> None:
        """Leave the current screen (never the workspace): for screens without their own Back."""
        if len(self.screen_stack) > 2:
            self.pop_screen()

    async def action_quit(self) -> None:
        from curiosity_tui.screens.monitor import RunMonitorScreen

        for screen in self.screen_stack:
            if isinstance(screen, RunMonitorScreen):
                screen.cancel()
        self.exit()

    def action_help(self) -> None:
        from curiosity_tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        self.push_screen(HelpScreen(self.screen))

    # -- command palette --------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        provider = getattr(screen, "palette_commands", None)
        if provider is not None:
            yield from provider()
        yield SystemCommand("Help", "Keys of this screen (?)", self.action_help)
        yield from super().get_system_commands(screen)


def run_curated(ledger: Path | str, *, sessions: int, curator: str, args: Any) -> int:
    """``curiosity-tui run LEDGER --curator human``: the app hosts the run and its curator.

    Returns 0 when the run reached ``sessions``, 1 when it stopped early (failed or quit)."""
    from curiosity_tui.cli import run_cmds
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.screens.monitor import RunRequest

    path = Path(ledger)
    with Ledger.open(path) as probe:
        model = probe.meta.model
    req = RunRequest(
        ledger=path,
        sessions=sessions,
        curator=curator,
        client_factory=lambda: run_cmds.model_client(args, model),
        embedder_factory=lambda client: run_cmds._embedder(args, client),
    )
    app = make_app(path.parent, run=req, curator_name=curator)
    app.run()
    if req.error:
        print(f"curiosity-tui: run failed: {req.error}")
        return 1
    res = req.result
    if res is None or res.failed or res.sessions_done < sessions:
        with Ledger.open(path) as led:
            done = led.last_session
        print(
            f"{path}: stopped with {done} of {sessions} session(s) committed; "
            "run the same command again to resume"
        )
        return 1
    print(f"{path}: {res.sessions_done} session(s) committed")
    return 0


def make_app(workspace: Path | str, **opts: Any) -> CuriosityApp:
    """Build the app for ``workspace``.

    Options: ``ledger`` (open this ledger's browser at once), ``keymap`` (binding id -> keys;
    merged over the file named by ``CURIOSITY_TUI_KEYMAP``), ``theme``, ``curator_name``,
    ``run`` (a run request for the run monitor / curator).
    """
    keymap = load_keymap(os.environ.get("CURIOSITY_TUI_KEYMAP"))
    keymap.update(opts.pop("keymap", None) or {})
    return CuriosityApp(Path(workspace), keymap=keymap, **opts)
