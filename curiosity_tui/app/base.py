"""What every app of curiosity-tui carries: help (``?``), the command palette, the keymap,
the stylesheet and the navigator (:mod:`curiosity_tui.app.navigator`).

Every binding has an ``id`` so keys can be remapped: pass ``keymap={"browser.next": "n"}`` or
point ``CURIOSITY_TUI_KEYMAP`` at a TOML file with a ``[keymap]`` table of
``"id" = "key"`` lines or ``[keymap.<screen>]`` tables (docs/keys.md lists every id).
The command palette (ctrl+p) offers the app's commands plus those of the current screen
(each screen lists them in ``palette_commands``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from curiosity_tui.app import screen_registry
from curiosity_tui.app.navigator import Navigation
from curiosity_tui.errors import InputError

KEYMAP_ENV = "CURIOSITY_TUI_KEYMAP"
HERE = Path(__file__).resolve().parent
#: the shell every app loads; see the .tcss files for which app loads which
SHELL_CSS = HERE / "shell.tcss"
TABLES_CSS = HERE / "tables.tcss"


def load_keymap(path: str | Path | None) -> dict[str, str]:
    """The ``[keymap]`` table of a TOML file as binding id -> keys; {} when ``path`` is empty.

    Ids may be quoted (``"browser.prev_session" = "p"``) or nested
    (``[keymap.browser]`` with ``prev_session = "p"``; an unquoted dotted key is the same).
    A missing or unreadable file, a value that is not a string, or an id that names no
    binding is an :class:`InputError` naming the file.
    """
    if not path:
        return {}
    p = Path(path).expanduser()
    if not p.is_file():
        raise InputError(f"keymap file not found: {p}")
    import tomllib

    try:
        with p.open("rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise InputError(f"{p}: not a readable TOML file ({err})") from None
    except UnicodeDecodeError as err:  # tomllib reads UTF-8 only (exit 70 before)
        raise InputError(f"{p}: not UTF-8 text (byte {err.start})") from None
    table = data.get("keymap")
    if not isinstance(table, dict):
        raise InputError(f"{p}: no [keymap] table")
    keymap = _flatten(table, "", p)
    from curiosity_tui.app.screen_registry import binding_ids

    app_ids = {b.id for b in AppBase.BINDINGS if isinstance(b, Binding) and b.id}
    unknown = sorted(set(keymap) - binding_ids() - app_ids)
    if unknown:
        raise InputError(f"{p}: unknown binding id {unknown[0]!r} (see docs/keys.md)")
    from curiosity_tui.app.keymap_check import check_keymap

    check_keymap(keymap, p, AppBase.BINDINGS)  # names, q/escape kept, no key taken twice (408)
    return keymap


def _flatten(table: dict[str, object], prefix: str, where: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}.", where))
        elif isinstance(value, str) and value.strip():
            out[name] = value.strip()
        else:
            raise InputError(f"{where}: keymap.{name} must be a key name in quotes")
    return out


def env_keymap(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The keymap of ``$CURIOSITY_TUI_KEYMAP`` with ``extra`` merged over it."""
    keymap = load_keymap(os.environ.get(KEYMAP_ENV))
    keymap.update(extra or {})
    return keymap


class AppBase(Navigation):
    """The base of every app: subclasses set ``TITLE`` and push their first screen(s) in
    :meth:`open_home` (not ``on_mount``, so the keymap is in place first)."""

    CSS_PATH = [SHELL_CSS]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", show=False, id="app.q"),
        Binding("ctrl+q", "quit", "Quit", show=False, id="app.quit", priority=True),
        Binding("ctrl+b", "back", "Back", show=False, id="app.back"),
    ]

    def __init__(self, *, keymap: dict[str, str] | None = None, theme: str | None = None) -> None:
        super().__init__()
        self.initial_keymap = dict(keymap or {})
        if theme:
            self.theme = theme

    def on_mount(self) -> None:
        if self.initial_keymap:
            self.set_keymap(self.initial_keymap)
        self.open_home()

    def open_home(self) -> None:
        """Push the app's first screen(s)."""

    async def action_back(self) -> None:
        """Leave the current screen (never the first one): for screens without their own Back."""
        if len(self.screen_stack) > 2:
            self.pop_screen()

    def action_help(self) -> None:
        HelpScreen = screen_registry.help_screen()
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        provider = getattr(screen, "palette_commands", None)
        if provider is not None:
            yield from provider()
        yield SystemCommand("Help", "Keys of this screen (?)", self.action_help)
        yield from super().get_system_commands(screen)

    def deliver_screenshot(
        self,
        filename: str | None = None,
        path: str | None = None,
        time_format: str | None = None,
    ) -> str | None:
        """The palette's Screenshot: an SVG in ``path``, else ``$CURIOSITY_SCREENSHOTS``, else
        the current folder; the notice names the full path, or exactly why it was not saved
        (Textual's default wrote to ~/Downloads and said only "Failed to save screenshot")."""
        from curiosity_tui.app.screenshot import save_screenshot

        saved, message = save_screenshot(self, filename=filename, folder=path)
        self.notify(message, title="Screenshot", severity="information" if saved else "error",
                    markup=False)  # fmt: skip
        return saved
