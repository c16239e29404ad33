"""The browser's tree (issue 28, item 10): `e` expands every node (it opened collapsed with no
expand-all) and a question cut at the pane's edge ends in an ellipsis (it was cut mid-word).
Keys pressed one at a time and in one burst."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rich.style import Style
from textual.widgets.tree import TreeNode

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger
from curiosity_tui.widgets.node_tree import LedgerTree

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "ledgers" / "example-C+cur-pilot02"


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _walk(node: TreeNode) -> list[TreeNode]:  # type: ignore[type-arg]
    out = []
    for child in node.children:
        out.append(child)
        out.extend(_walk(child))
    return out


@pytest.mark.parametrize("burst", [False, True])
async def test_e_expands_every_node_and_long_questions_end_in_an_ellipsis(
    tmp_path: Path, burst: bool
) -> None:
    ledger = tmp_path / "ledgers" / EXAMPLE.name
    shutil.copytree(EXAMPLE, ledger, ignore=shutil.ignore_patterns("writer.lock"))
    with Ledger.open(ledger) as led:
        total = len(led.raw_nodes())
    app = make_app(tmp_path, ledger=ledger)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        tree = app.screen.query_one(LedgerTree)
        tree.focus()
        await pilot.pause()
        before = [n for n in _walk(tree.root) if isinstance(n.data, str)]
        assert len(before) < total  # opens folded below the first root
        if burst:
            await pilot.press("e", "j", "k")
        else:
            await pilot.press("e")
        await settle(pilot)
        shown = [n for n in _walk(tree.root) if isinstance(n.data, str)]
        assert len(shown) == total
        assert all(n.is_expanded for n in shown if n.allow_expand)
        room = tree.scrollable_content_region.width
        cut = 0
        for n in shown:
            label = tree.render_label(n, Style(), Style())
            assert label.cell_len <= room
            cut += label.plain.endswith("…")
        assert cut >= 1  # some questions of this ledger are longer than a 100-column pane
