"""The one navigator: every screen change a screen asks for goes through here.

Screens never import sibling screens; they call ``navigator(self).open_…`` (the
:class:`~curiosity_tui.screens.base.Navigator` protocol) and this class — a base of every app
of ours — pushes the screen class the registry (:mod:`curiosity_tui.app.screen_registry`)
loads, when it is first asked, so importing the app loads no screen it has not opened yet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App
from textual.screen import Screen

from curiosity_tui.app import screen_registry as screens
from curiosity_tui.widgets.ordered import push_when_ready

if TYPE_CHECKING:
    from curiosity_tui.contract.downgrades import PendingDowngrade
    from curiosity_tui.contract.support import SupportItem
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.ledger.view import LedgerView
    from curiosity_tui.protocol.schemas import JudgeBeforeResponse
    from curiosity_tui.screens.base import Navigator


class Navigation(App[None]):
    """``open_*`` push one screen; ``ask_*`` push a modal and hand its result to ``done``."""

    #: a standalone app exits when the screen it was started for is closed
    EXIT_WITH_LAST_SCREEN: ClassVar[bool] = False

    def open_ledger(self, path: Path, node: str | None = None) -> None:
        BrowserScreen = screens.browser()
        self.push_screen(BrowserScreen(Path(path), node=node))

    def show_node(self, path: Path, node: str, *, closing: Screen) -> None:
        """Show ``node`` in the browser of ``path``: the one right under ``closing`` (which
        closes) when there is one, else a new browser."""
        BrowserScreen = screens.browser()
        below = self.screen_stack[-2] if len(self.screen_stack) > 1 else None
        if isinstance(below, BrowserScreen) and below.path == Path(path):
            closing.dismiss()
            below.goto_node(node)
        else:
            self.push_screen(BrowserScreen(Path(path), node=node))

    def open_pack(self, path: Path) -> None:
        PackOpenScreen = screens.pack_open()
        self.push_screen(PackOpenScreen(Path(path)))

    def open_rating(self, packdir: Path, rater: str, *, closing: Screen | None = None) -> None:
        """Rate ``packdir`` as ``rater``. A bad pack or rater raises ``CuriosityError`` before
        anything changes; otherwise ``closing`` (the dialog that asked) closes first."""
        RatingScreen = screens.rating()
        screen = RatingScreen(Path(packdir), rater)
        if closing is not None:
            closing.dismiss()
        self.push_screen(screen)

    def open_agreement(self, packdir: Path) -> None:
        AgreementScreen = screens.agreement()
        self.push_screen(AgreementScreen(Path(packdir)))

    def open_adjudication(self, packdir: Path, coordinator: str | None = None) -> None:
        """The coordinator's adjudication of ``packdir`` as ``human:NAME``: ``coordinator``,
        else the app's curator name, ``$CURIOSITY_CURATOR``, ``$USER``."""
        import os

        AdjudicationScreen = screens.adjudication()
        name = (
            coordinator
            or getattr(self, "curator_name", None)
            or os.environ.get("CURIOSITY_CURATOR")
            or os.environ.get("USER")
            or "coordinator"
        )
        name = "".join(str(name).split()).removeprefix("human:") or "coordinator"
        self.push_screen(AdjudicationScreen(Path(packdir), f"human:{name}"))

    def open_audit(self, path: Path) -> None:
        AuditScreen = screens.audit()
        self.push_screen(AuditScreen(Path(path)))

    def open_downgrades(self, path: Path, *, ledger: Ledger | None = None) -> None:
        DowngradesScreen = screens.downgrades()
        self.push_screen(DowngradesScreen(Path(path), ledger=ledger))

    async def open_support(self, path: Path, *, ledger: Ledger | None = None) -> None:
        """The support judgements of ``path``; returns once the screen has mounted, so keys
        typed after the opening key land in it."""
        SupportScreen = screens.support()
        await push_when_ready(self, SupportScreen(Path(path), ledger=ledger))

    def open_analysis(self, paths: Sequence[Path]) -> None:
        AnalysisScreen = screens.analysis()
        self.push_screen(AnalysisScreen([Path(p) for p in paths]))

    def open_compare(self, path_a: Path, path_b: Path) -> None:
        CompareScreen = screens.compare()
        self.push_screen(CompareScreen(Path(path_a), Path(path_b)))

    def open_rendering(self, view: LedgerView, session: int) -> None:
        RenderingScreen = screens.rendering()
        self.push_screen(RenderingScreen(view, session))

    def open_curator(
        self, ledger: Ledger, after: int, actor: str, resume: Callable[[], None]
    ) -> None:
        CuratorScreen = screens.curator()
        self.push_screen(CuratorScreen(ledger, after, actor, resume))

    def open_human_session(
        self,
        ledger: Ledger,
        t: int,
        person: str,
        done: Callable[[bool | None], None],
        *,
        judge: JudgeBeforeResponse | None = None,
        judge_by: str | None = None,
    ) -> None:
        """``person`` takes session ``t`` of ``ledger``; ``done`` gets True once it is committed,
        False (or None) when they left it (the draft is kept)."""
        HumanSessionScreen = screens.human_session()
        screen = HumanSessionScreen(ledger, t, person, judge=judge, judge_by=judge_by)
        self.push_screen(screen, done)

    def ask_search(
        self, nodes: dict[str, Any], done: Callable[[tuple[str, list[str]] | None], None]
    ) -> None:
        SearchScreen = screens.search()
        self.push_screen(SearchScreen(nodes), done)

    async def ask_reason(self, title: str, done: Callable[[Any], None], **form: Any) -> None:
        """The curator's reason form; ``done`` gets an ``ActionForm`` or ``None``. Returns once the
        form has mounted and focused its first field, so keys typed after the opening key land
        in it (widgets/ordered.py)."""
        ReasonScreen = screens.reason()
        await push_when_ready(self, ReasonScreen(title, **form), done)

    async def ask_decision(
        self,
        proposal: PendingDowngrade,
        decision: str,
        done: Callable[[tuple[str, str] | None], None],
    ) -> None:
        DecideScreen = screens.decide()
        await push_when_ready(self, DecideScreen(proposal, decision), done)

    async def ask_support(
        self, item: SupportItem, done: Callable[[tuple[str, str] | None], None]
    ) -> None:
        SupportJudgeScreen = screens.support_form()
        await push_when_ready(self, SupportJudgeScreen(item), done)

    def close_screen(self, screen: Screen) -> None:
        """Close ``screen``; a standalone app whose only screen it is exits instead."""
        if self.EXIT_WITH_LAST_SCREEN and len(self.screen_stack) <= 2:
            self.exit()
        else:
            screen.dismiss()


if TYPE_CHECKING:

    def _implements_the_protocol(app: Navigation) -> Navigator:
        """A static check: mypy fails here when the navigator stops matching the
        :class:`~curiosity_tui.screens.base.Navigator` protocol the screens call."""
        return app
