"""The app shows zero-width and bidi characters in model text visibly (Pilot)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.widgets.node_tree import LedgerTree

HIDDEN = "Did the press\u200b cause \u202eit\u202c?\ufeff"


async def test_zero_width_and_bidi_characters_are_visible_in_tree_and_detail(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledgers" / "hidden"
    Ledger.create(path, RunMeta(name="hidden", seed=HIDDEN, config="C-cur")).close()
    app = make_app(tmp_path, ledger=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        tree = app.screen.query_one(LedgerTree)
        label = tree.cursor_node.label.plain  # type: ignore[union-attr]
        body = str(app.screen.query_one("#detail-body", Static).render())
        for shown in (label, body):
            assert "press⟨U+200B⟩ cause ⟨U+202E⟩it⟨U+202C⟩?⟨U+FEFF⟩" in shown
            assert not any(ch in shown for ch in "\u200b\u202e\u202c\ufeff")
