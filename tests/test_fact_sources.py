"""Under pilot-02 a fact's cited source is match-checked like requirement evidence: a fact
whose text the source does not hold is stored without ``[source …]``, and the session's
record says so; a fact quoting the source keeps it (issue 25, item 10)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.contract.sources import add_source
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.research import ResearchResponder, load_bank
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import run_ledger

QUOTED = "Wittenberg printers issued more than two hundred editions of Luther's tracts."
SOURCE = f"Printing in the Empire, 1517-1520.\n{QUOTED}\nOther presses followed.\n"


class CitingResponder(ResearchResponder):
    """Every deliverable's facts cite the ledger's source: one quotes it, one does not."""

    source_id = ""

    def __call__(self, kind: str, session: int | None, body: dict[str, Any], run: str = "") -> Any:
        reply = super().__call__(kind, session, body, run=run)
        if isinstance(reply, dict) and isinstance(reply.get("facts"), list) and reply["facts"]:
            node = reply["facts"][0]["node"]
            reply["facts"] = [
                {"node": node, "text": QUOTED, "source_id": self.source_id},
                {"node": node, "text": "None of the above", "source_id": self.source_id},
            ]
        return reply


@pytest.mark.parametrize(("contract", "checked"), [("pilot-02", True), ("pilot-01", False)])
def test_fact_sources_are_match_checked_under_verified_evidence(
    tmp_path: Path, contract: str, checked: bool
) -> None:
    src = tmp_path / "source.txt"
    src.write_text(SOURCE, encoding="utf-8")
    path = tmp_path / "run"
    responder = CitingResponder()
    led = Ledger.create(
        path, RunMeta(name="r", seed=load_bank().seed, config="C-cur", contract=contract)
    )
    try:
        add_source(led, src, title="note", locator="source.txt", actor="system")
        responder.source_id = led.sources()[0].id

        async def go() -> None:
            with ScriptedServer(responder=responder) as srv:
                client = ModelClient(base_url=srv.base_url, api_key="k", model="scripted-demo")
                await run_ledger(led, client, sessions=2)
                await client.aclose()

        asyncio.run(go())
    finally:
        led.close()
    with Ledger.open(path) as led:
        facts = [f for n in led.raw_nodes().values() for f in n.get("facts", [])]
        rejected = [r for rec in led.session_records() for r in rec.rejected]
    cited = {f["text"]: f.get("source") for f in facts}
    assert cited[QUOTED] == responder.source_id
    if checked:
        assert cited["None of the above"] is None
        assert any("does not occur in the cited source" in r for r in rejected), rejected
    else:  # pilot-01 takes the model's word (evidence = asserted)
        assert cited["None of the above"] == responder.source_id
