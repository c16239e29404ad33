"""The server is identified (issue 23.2): each call keeps the reply's ``model`` and
``system_fingerprint``; the endpoint record keeps llama.cpp's /props, the /v1/models entry and
the sha256 of ``--model-file``; a change between sessions of one run is a ``server_changed``
event, shown in the browser's header and in the report."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger
from curiosity_tui.offline.research import ResearchResponder
from curiosity_tui.offline.scripted_server import ScriptedServer

SEED = "Did the printing press cause the Reformation?"
TEMPLATE_A = "{% for m in messages %}{{ m.content }}{% endfor %}"


def _server(build: str, fingerprint: str) -> ScriptedServer:
    return ScriptedServer(
        responder=ResearchResponder(),
        llama_props=True,
        system_fingerprint=fingerprint,
        props_extra={
            "model_path": "/models/gemma-3-270m.gguf",
            "build_info": build,
            "chat_template": TEMPLATE_A,
        },
    )


def _run(path: Path, server: ScriptedServer, sessions: int, model_file: Path) -> int:
    return main(
        ["run", str(path), "--sessions", str(sessions), "--base-url", server.base_url,
         "--api-key", "x", "--model", "scripted", "--model-file", str(model_file)]
    )  # fmt: skip


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledgers" / "run"
    assert main(["ledger", "new", str(path), "--seed", SEED, "--config", "C-cur"]) == 0
    return path


def test_the_server_is_identified_and_a_change_recorded(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    with _server("b5000-abc", "fp_one") as server:
        assert _run(ledger, server, 1, weights) == 0
    with Ledger.open(ledger) as led:
        first = led.meta.endpoint
        calls = led.session_records()[0].calls
    assert first is not None and first.server_props is not None
    assert first.server_props["model_path"] == "/models/gemma-3-270m.gguf"
    assert first.server_props["build_info"] == "b5000-abc"
    assert (
        first.server_props["chat_template_sha256"]
        == hashlib.sha256(TEMPLATE_A.encode()).hexdigest()
    )
    assert first.server_props["total_slots"] == 4 and first.server_props["n_ctx"] == 4096
    assert first.listed_model == {"id": "scripted", "object": "model"}
    assert first.model_file is not None
    assert first.model_file.sha256 == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert first.model_file.bytes == weights.stat().st_size
    chat = [c for c in calls if c.response_format != "embeddings"]
    assert chat and all(
        c.response_model == "scripted" and c.system_fingerprint == "fp_one" for c in chat
    )

    # the lab rebuilt the server and swapped the weights between session 1 and 2
    weights.write_bytes(b"GGUF" + bytes(range(255, -1, -1)) * 64)
    with _server("b5100-def", "fp_two") as server:
        assert _run(ledger, server, 3, weights) == 0
    journal = [json.loads(x) for x in (ledger / "journal.jsonl").read_text().splitlines()]
    changed = [e for e in journal if e["kind"] == "server_changed"]
    assert len(changed) == 1
    data = changed[0]["data"]
    assert data["after_session"] == 1
    assert data["changes"]["server_props.build_info"] == ["b5000-abc", "b5100-def"]
    assert "model_file.sha256" in data["changes"]
    assert "server_props.model_path" not in data["changes"]  # what did not change is not listed
    with Ledger.open(ledger) as led:
        assert [c.after_session for c in led.meta.server_changes] == [1]
        summary = led.meta.server_changes[0].summary()
    assert summary.startswith("the server changed between s1 and s2: ")

    report = tmp_path / "report.md"
    assert main(["report", str(ledger.parent), "--out", str(report)]) == 0
    text = report.read_text()
    assert "## How the runs were run (sampling, server, tool)" in text
    assert "the server changed between s1 and s2" in text
    assert (
        "the replies' model / system_fingerprint changed between s1 and s2: "
        "scripted / fp_one to scripted / fp_two" in text
    )
    assert "build\\_info b5100-def" in text or "build_info b5100-def" in text


async def test_the_browser_header_names_the_change(ledger: Path, tmp_path: Path) -> None:
    from curiosity_tui.app import make_app
    from curiosity_tui.ledger.event_data import ServerChanged

    with (
        Ledger.open(ledger, write=True) as led,
        led.batch(0, marker="batch_committed", label="endpoint") as b,
    ):
        b.emit(ServerChanged(after_session=2, changes={"model": ["a", "b"]}))
    app = make_app(tmp_path, ledger=ledger)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "the server changed between s2 and s3: model" in app.screen.sub_title


def test_an_unreadable_model_file_is_one_line(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (ledger / "journal.jsonl").read_bytes()
    with _server("b1", "fp") as server:
        code = _run(ledger, server, 1, tmp_path / "missing.gguf")
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1
    assert "--model-file" in err[0] and "missing.gguf" in err[0] and "Traceback" not in err[0]
    assert (ledger / "journal.jsonl").read_bytes() == before


def test_a_probe_from_before_is_not_a_change(ledger: Path) -> None:
    """A run whose earlier probe recorded no identity (written before issue 23) gets no
    server_changed when a later probe does: nothing was known to change from."""
    from curiosity_tui.ledger.endpoint_record import EndpointCapabilities

    old = EndpointCapabilities(model="m", base_url="http://h/v1")
    new: Any = old.model_copy(update={"server_props": {"build_info": "b1"}})
    assert new.changes_from(old) == {}
    assert new.changes_from(None) == {}
    moved = new.model_copy(update={"base_url": "http://other/v1"})
    assert moved.changes_from(new) == {"base_url": ["http://h/v1", "http://other/v1"]}
