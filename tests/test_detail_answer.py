"""The detail pane shows a closed node's answer (issue 28, item 10): it was only raw JSON in
a journal line."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import Static

from curiosity_tui.app import make_app
from curiosity_tui.widgets.node_detail import NodeDetail

ROOT = Path(__file__).resolve().parents[1]
EPISODE = ROOT / "ledgers" / "episode-suppression-pilot01"  # q1 answered and closed in s3
ANSWER = "The press was a necessary accelerant: scale and speed of printing let Luther's texts"


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_the_answer_section_of_a_closed_node(tmp_path: Path) -> None:
    ledger = tmp_path / "ledgers" / EPISODE.name
    shutil.copytree(EPISODE, ledger, ignore=shutil.ignore_patterns("writer.lock"))
    app = make_app(tmp_path, ledger=ledger)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await settle(pilot)  # the journal index is built after the tree is painted
        body = str(app.screen.query_one(NodeDetail).query_one("#detail-body", Static).render())
        assert "q1  closed" in body
        head, _, rest = body.partition("\nAnswer\n")
        assert rest, body[:400]
        assert rest.lstrip().startswith(ANSWER)
        assert "delivered in session 3" in rest.split("\nFacts")[0]
