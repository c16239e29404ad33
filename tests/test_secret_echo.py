"""An endpoint that echoes the API key in its replies (an obedient model on an injected
prompt, or a logging proxy) never gets the key into a file: the client redacts its own key
from every reply it records, so the journal, the projection, a pack, its key and a rater's
exported copy hold it 0 times (issue 25, item 8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.offline.research import ResearchResponder, load_bank
from curiosity_tui.offline.scripted_server import ScriptedServer

KEY = "sk-test-Echo9f3Qz7LmW2xVb8Tn"


def _with_key(value: Any) -> Any:
    """Every prose string of a reply gets the key appended (ids and enums stay as they are)."""
    if isinstance(value, str):
        return f"{value} {KEY}" if len(value) > 24 else value
    if isinstance(value, list):
        return [_with_key(v) for v in value]
    if isinstance(value, dict):
        return {k: _with_key(v) for k, v in value.items()}
    return value


class EchoingResponder(ResearchResponder):
    def __call__(self, kind: str, session: int | None, body: dict[str, Any], run: str = "") -> Any:
        return _with_key(super().__call__(kind, session, body, run=run))


def _files_holding_the_key(root: Path) -> list[str]:
    needle = KEY.encode("utf-8")
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    )


def test_an_echoed_key_reaches_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    seed = load_bank().seed
    runs = tmp_path / "runs"
    with ScriptedServer(responder=EchoingResponder()) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        for config in ("C-cur", "B-armed-cur"):
            path = runs / config
            Ledger.create(path, RunMeta(name=config, seed=seed, config=config)).close()
            rc = main(["run", str(path), "--sessions", "5", "--model", "scripted-demo"])
            assert rc == 0, capsys.readouterr().err
        echoed = [r for r in srv.requests if r.kind in ("deliverable", "curator")]
    assert echoed, "the server served the run"
    pack = tmp_path / "packs" / "p1"
    assert main(["pack", "build", str(runs), "--out", str(pack), "--raters", "ann,bob"]) == 0
    assert (
        main(["pack", "export", str(pack), "--rater", "ann", "--out", str(tmp_path / "ann")]) == 0
    )
    out = capsys.readouterr()
    assert KEY not in out.out + out.err
    assert (runs / "C-cur" / "journal.jsonl").stat().st_size > 0
    assert _files_holding_the_key(tmp_path) == []
    with Ledger.open(runs / "C-cur") as led:  # the replies were stored, the key redacted
        texts = " ".join(n["text"] for n in led.raw_nodes().values())
        assert "[redacted]" in texts
