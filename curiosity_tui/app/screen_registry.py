"""The one registry of screens: each screen once, with the heading its keys have in
docs/keys.md, the namespace of its binding ids, the app methods that push it and a loader.

Everything that names screens is derived from :data:`SCREENS`: the navigator pushes the class
a loader returns (:mod:`curiosity_tui.app.navigator`; :mod:`curiosity_tui.app.main` and
:mod:`curiosity_tui.app.standalone` likewise), the keymap documentation walks the entries in
order (:mod:`curiosity_tui.app.keys`, docs/keys.md) and the keymap's id check asks
:func:`binding_ids`. ``tests/test_screen_registry.py`` holds the entries to the screens/
folder, the ids to their namespace and ``opened_by`` to the navigator.

Each loader imports its screen module when first called, so importing the app loads no screen
it has not opened yet; the imports are plain ``from … import`` lines, so the import graph sees
them. This module is the only one of the app that imports a screen module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curiosity_tui.screens.adjudication import AdjudicationScreen
    from curiosity_tui.screens.agreement import AgreementScreen
    from curiosity_tui.screens.analysis import AnalysisScreen
    from curiosity_tui.screens.audit import AuditScreen
    from curiosity_tui.screens.browser import BrowserScreen
    from curiosity_tui.screens.compare import CompareScreen
    from curiosity_tui.screens.curator import CuratorScreen
    from curiosity_tui.screens.decide import DecideScreen
    from curiosity_tui.screens.downgrades import DowngradesScreen
    from curiosity_tui.screens.help import HelpScreen
    from curiosity_tui.screens.human_session import HumanSessionScreen
    from curiosity_tui.screens.monitor import RunMonitorScreen
    from curiosity_tui.screens.pack_open import PackOpenScreen
    from curiosity_tui.screens.rating import RatingScreen
    from curiosity_tui.screens.reason import ReasonScreen
    from curiosity_tui.screens.rendering import RenderingScreen
    from curiosity_tui.screens.search import SearchScreen
    from curiosity_tui.screens.support import SupportScreen
    from curiosity_tui.screens.support_form import SupportJudgeScreen
    from curiosity_tui.screens.workspace import WorkspaceScreen
    from curiosity_tui.widgets.item_text import ItemText
    from curiosity_tui.widgets.node_tree import LedgerTree


def workspace() -> type[WorkspaceScreen]:
    from curiosity_tui.screens.workspace import WorkspaceScreen

    return WorkspaceScreen


def browser() -> type[BrowserScreen]:
    from curiosity_tui.screens.browser import BrowserScreen

    return BrowserScreen


def item_text() -> type[ItemText]:
    from curiosity_tui.widgets.item_text import ItemText

    return ItemText


def support() -> type[SupportScreen]:
    from curiosity_tui.screens.support import SupportScreen

    return SupportScreen


def support_form() -> type[SupportJudgeScreen]:
    from curiosity_tui.screens.support_form import SupportJudgeScreen

    return SupportJudgeScreen


def ledger_tree() -> type[LedgerTree]:
    from curiosity_tui.widgets.node_tree import LedgerTree

    return LedgerTree


def search() -> type[SearchScreen]:
    from curiosity_tui.screens.search import SearchScreen

    return SearchScreen


def rendering() -> type[RenderingScreen]:
    from curiosity_tui.screens.rendering import RenderingScreen

    return RenderingScreen


def audit() -> type[AuditScreen]:
    from curiosity_tui.screens.audit import AuditScreen

    return AuditScreen


def downgrades() -> type[DowngradesScreen]:
    from curiosity_tui.screens.downgrades import DowngradesScreen

    return DowngradesScreen


def decide() -> type[DecideScreen]:
    from curiosity_tui.screens.decide import DecideScreen

    return DecideScreen


def curator() -> type[CuratorScreen]:
    from curiosity_tui.screens.curator import CuratorScreen

    return CuratorScreen


def reason() -> type[ReasonScreen]:
    from curiosity_tui.screens.reason import ReasonScreen

    return ReasonScreen


def monitor() -> type[RunMonitorScreen]:
    from curiosity_tui.screens.monitor import RunMonitorScreen

    return RunMonitorScreen


def human_session() -> type[HumanSessionScreen]:
    from curiosity_tui.screens.human_session import HumanSessionScreen

    return HumanSessionScreen


def pack_open() -> type[PackOpenScreen]:
    from curiosity_tui.screens.pack_open import PackOpenScreen

    return PackOpenScreen


def rating() -> type[RatingScreen]:
    from curiosity_tui.screens.rating import RatingScreen

    return RatingScreen


def agreement() -> type[AgreementScreen]:
    from curiosity_tui.screens.agreement import AgreementScreen

    return AgreementScreen


def adjudication() -> type[AdjudicationScreen]:
    from curiosity_tui.screens.adjudication import AdjudicationScreen

    return AdjudicationScreen


def analysis() -> type[AnalysisScreen]:
    from curiosity_tui.screens.analysis import AnalysisScreen

    return AnalysisScreen


def compare() -> type[CompareScreen]:
    from curiosity_tui.screens.compare import CompareScreen

    return CompareScreen


def help_screen() -> type[HelpScreen]:
    from curiosity_tui.screens.help import HelpScreen

    return HelpScreen


@dataclass(frozen=True)
class KeyHolder:
    """A widget whose keys docs/keys.md lists right after its screen's (the ledger tree)."""

    title: str
    ids: str
    load: Callable[[], type[Any]]


@dataclass(frozen=True)
class ScreenEntry:
    #: the namespace of the screen's binding ids: every id is ``<ids>.<name>`` (or ``app.*``)
    ids: str
    #: the heading of the screen's keys in docs/keys.md
    title: str
    load: Callable[[], type[Any]]
    #: the app methods that push this screen (the navigator's ``open_*`` / ``ask_*`` …)
    opened_by: tuple[str, ...]
    #: widgets with keys of their own, documented after the screen
    parts: tuple[KeyHolder, ...] = ()


_TREE = KeyHolder("Ledger tree (browser, curator)", "tree", ledger_tree)
_ITEM_TEXT = KeyHolder("Item text (rating: picking a quote)", "itemtext", item_text)

#: every screen, in the order docs/keys.md lists them
SCREENS: tuple[ScreenEntry, ...] = (
    ScreenEntry("workspace", "Workspace", workspace, ("open_home",)),
    ScreenEntry("browser", "Ledger browser", browser, ("open_ledger", "show_node"), (_TREE,)),
    ScreenEntry("search", "Search", search, ("ask_search",)),
    ScreenEntry("rendering", "Session input", rendering, ("open_rendering",)),
    ScreenEntry("audit", "Closure audit", audit, ("open_audit",)),
    ScreenEntry("downgrades", "Downgrades", downgrades, ("open_downgrades",)),
    ScreenEntry("decide", "Downgrade decision", decide, ("ask_decision",)),
    ScreenEntry("support", "Support judgements", support, ("open_support",)),
    ScreenEntry("judge", "Support judgement", support_form, ("ask_support",)),
    ScreenEntry("curator", "Curator between sessions", curator, ("open_curator",)),
    ScreenEntry("form", "Curator's reason form", reason, ("ask_reason",)),
    ScreenEntry("monitor", "Run monitor", monitor, ("open_home",)),
    ScreenEntry("human", "Human session", human_session, ("open_human_session",)),
    ScreenEntry("pack", "Open a pack", pack_open, ("open_pack",)),
    ScreenEntry("rating", "Rating", rating, ("open_rating",), (_ITEM_TEXT,)),
    ScreenEntry("agreement", "Agreement", agreement, ("open_agreement",)),
    ScreenEntry("adjudication", "Adjudication", adjudication, ("open_adjudication",)),
    ScreenEntry("analysis", "Analysis", analysis, ("open_analysis",)),
    ScreenEntry("compare", "Compare two runs", compare, ("open_compare",)),
    ScreenEntry("help", "Help", help_screen, ("action_help",)),
)


def key_holders() -> Iterator[tuple[str, str, type[Any]]]:
    """(title, id namespace, class) of every screen and of each widget documented with it,
    in the order of :data:`SCREENS`. Loads every screen module."""
    for entry in SCREENS:
        yield entry.title, entry.ids, entry.load()
        for part in entry.parts:
            yield part.title, part.ids, part.load()


def binding_ids() -> set[str]:
    """Every binding id of every screen (and widget) a keymap may name; the app's own
    ``app.*`` ids are the app's to add."""
    from textual.binding import Binding

    return {
        b.id
        for _title, _ids, cls in key_holders()
        for b in getattr(cls, "BINDINGS", [])
        if isinstance(b, Binding) and b.id
    }
