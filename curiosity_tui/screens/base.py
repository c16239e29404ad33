"""What every screen of the app shares: palette commands derived from its bindings, a help
title in words, and the :class:`Navigator` — what a screen may ask the app to open.

Screens never import sibling screens. To go somewhere they call ``navigator(self).open_…``;
the app (:class:`curiosity_tui.app.base.AppBase`) implements every method and pushes the
screen classes its one registry (:mod:`curiosity_tui.app.screen_registry`) loads. This module is not a screen: it holds no
screen of its own, so importing it is not a sibling import.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.screen import Screen

if TYPE_CHECKING:
    from curiosity_tui.contract.downgrades import PendingDowngrade
    from curiosity_tui.contract.support import SupportItem
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.ledger.view import LedgerView
    from curiosity_tui.protocol.schemas import JudgeBeforeResponse


class Navigator(Protocol):
    """What screens may ask the app to open. Each ``open_*`` pushes one screen; each ``ask_*``
    pushes a modal and calls ``done`` with its result (``None`` when cancelled)."""

    def open_ledger(self, path: Path, node: str | None = None) -> None: ...
    def open_pack(self, path: Path) -> None: ...
    def open_rating(self, packdir: Path, rater: str, *, closing: Screen | None = None) -> None: ...
    def open_agreement(self, packdir: Path) -> None: ...
    def open_adjudication(self, packdir: Path, coordinator: str | None = None) -> None: ...
    def open_audit(self, path: Path) -> None: ...
    def open_downgrades(self, path: Path, *, ledger: Ledger | None = None) -> None: ...
    async def open_support(self, path: Path, *, ledger: Ledger | None = None) -> None: ...
    def open_analysis(self, paths: Sequence[Path]) -> None: ...
    def open_compare(self, path_a: Path, path_b: Path) -> None: ...
    def open_rendering(self, view: LedgerView, session: int) -> None: ...
    def open_curator(
        self, ledger: Ledger, after: int, actor: str, resume: Callable[[], None]
    ) -> None: ...
    def open_human_session(
        self,
        ledger: Ledger,
        t: int,
        person: str,
        done: Callable[[bool | None], None],
        *,
        judge: JudgeBeforeResponse | None = None,
        judge_by: str | None = None,
    ) -> None: ...
    def show_node(self, path: Path, node: str, *, closing: Screen) -> None: ...
    def ask_search(
        self, nodes: dict[str, Any], done: Callable[[tuple[str, list[str]] | None], None]
    ) -> None: ...
    async def ask_reason(self, title: str, done: Callable[[Any], None], **form: Any) -> None: ...
    async def ask_decision(
        self,
        proposal: PendingDowngrade,
        decision: str,
        done: Callable[[tuple[str, str] | None], None],
    ) -> None: ...
    async def ask_support(
        self, item: SupportItem, done: Callable[[tuple[str, str] | None], None]
    ) -> None: ...
    def close_screen(self, screen: Screen) -> None: ...


def navigator(node: DOMNode) -> Navigator:
    """The app of ``node`` as a :class:`Navigator` (every app of ours is an ``AppBase``)."""
    return cast(Navigator, node.app)


def help_title(screen: Screen) -> str:
    """The help screen's title for ``screen``: its ``HELP_TITLE``, else its class name in
    words (``PackOpenScreen`` -> "Pack open")."""
    title = getattr(screen, "HELP_TITLE", "")
    if title:
        return str(title)
    name = type(screen).__name__.removesuffix("Screen") or type(screen).__name__
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name) or [name]
    return " ".join([words[0], *(w.lower() for w in words[1:])])


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

    #: the help screen's title; "" derives one from the class name (see :func:`help_title`)
    HELP_TITLE: ClassVar[str] = ""
    #: ``? Help`` first in the footer, so a narrow terminal cuts other keys before it; same
    #: id and action name as the app's binding (one footer entry, one keymap id)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="app.help"),
    ]

    def action_help(self) -> None:
        self.app.action_help()  # type: ignore[attr-defined]

    def palette_commands(self) -> Iterable[SystemCommand]:
        return binding_commands(self, self.BINDINGS)

    @property
    def nav(self) -> Navigator:
        return navigator(self)
