"""The footer shows the focused widget's keys and is rebuilt only when they change (decision 278)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from curiosity_tui.widgets.footer import Footer


class Pane(Static, can_focus=True):
    def __init__(self, key: str, what: str, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(what, **kwargs)
        self._bindings.bind(key, "noop", what)

    def action_noop(self) -> None:
        pass


class TwoPanes(App[None]):
    def compose(self) -> ComposeResult:
        yield Pane("a", "Alpha", id="one")
        yield Pane("b", "Beta", id="two")
        yield Footer()


def footer_keys(app: App[None]) -> list[FooterKey]:
    return list(app.screen.query_one(Footer).query(FooterKey))


async def test_footer_follows_focus_and_skips_identical_rebuilds() -> None:
    app = TwoPanes()
    async with app.run_test(size=(80, 10)) as pilot:
        app.screen.query_one("#one").focus()
        await pilot.pause()
        keys = footer_keys(app)
        assert "a" in {k.key for k in keys} and "b" not in {k.key for k in keys}
        for _ in range(5):  # what textual publishes on mount, focus, workers, resume
            app.screen.refresh_bindings()
        await pilot.pause()
        assert footer_keys(app) == keys  # the very same widgets: nothing was rebuilt
        await pilot.press("tab")  # focus the other pane: its key replaces the first one's
        await pilot.pause()
        shown = {k.key for k in footer_keys(app)}
        assert "b" in shown and "a" not in shown
        app.screen.query_one("#one").focus()
        await pilot.pause()
        assert "a" in {k.key for k in footer_keys(app)}
