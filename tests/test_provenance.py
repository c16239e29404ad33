"""Provenance everywhere (issue 23.3): one block — tool version, git commit and dirty flag,
Python, key packages, platform — in every artifact kind, and ``curiosity-tui provenance PATH``
printing it; a dirty checkout is reported dirty."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from curiosity_tui import provenance
from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.offline.scripted_server import ScriptedServer

PLAN = """\
name = "prov"
configurations = ["C+cur", "B-armed+cur"]
runs = 1
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
model = "scripted"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["max_depth"]
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "curiosity_tui").mkdir(parents=True)
    (root / "curiosity_tui" / "a.py").write_text("x = 1\n")
    (root / "README.md").write_text("r\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "one")
    return root


def test_a_clean_checkout_is_clean_and_a_changed_one_dirty(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    commit, dirty = provenance.checkout_state(root)
    assert commit is not None and len(commit) == 40 and dirty is False
    (root / "notes.txt").write_text("an output beside the code\n")  # untracked, outside
    assert provenance.checkout_state(root) == (commit, False)
    (root / "curiosity_tui" / "b.py").write_text("y = 2\n")  # a new module in the package
    assert provenance.checkout_state(root) == (commit, True)
    (root / "curiosity_tui" / "b.py").unlink()
    (root / "README.md").write_text("changed\n")  # a tracked file changed
    assert provenance.checkout_state(root) == (commit, True)
    assert provenance.checkout_state(tmp_path / "nowhere") == (None, None)


def test_a_dirty_block_says_dirty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The block a ledger stores, as ``provenance`` prints it, from a dirty checkout."""
    block = provenance.current().model_copy(update={"git_commit": "ab" * 20, "git_dirty": True})
    with Ledger.create(
        tmp_path / "led", RunMeta(name="led", seed="Q?", config="C-cur", provenance=block)
    ):
        pass
    assert main(["provenance", str(tmp_path / "led")]) == 0
    out = capsys.readouterr().out
    assert f"git: {'ab' * 20} (dirty: uncommitted changes)" in out
    assert "Produced" not in out and "ledger run metadata" in out


def _every_artifact(tmp_path: Path) -> dict[str, Path]:
    """A locked scripted pilot, its pack, a rater's copy, a ratings file, a CSV and a report."""
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "runs"
    chain = out / "prereg.jsonl"
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)]) == 0
    assert main(["pilot", "run", str(plan), "--out", str(out), "--scripted"]) == 0
    pack = tmp_path / "pack"
    assert main(["pack", "build", str(out), "--out", str(pack), "--seed", "3"]) == 0
    with ScriptedServer(responder=lambda kind, session, body: "not JSON") as srv:  # missing
        argv = ["rate", str(pack), "--rater", "model:m1", "--model", "scripted"]
        main([*argv, "--base-url", srv.base_url, "--api-key", "x"])  # non-zero: all missing
    assert (pack / "ratings" / "model:m1.jsonl").is_file()
    copy = tmp_path / "copy"
    assert main(["pack", "export", str(pack), "--rater", "ann", "--out", str(copy)]) == 0
    csv = tmp_path / "metrics.csv"
    assert main(["metrics", str(out), "--csv", str(csv)]) == 0
    report = tmp_path / "report.md"
    assert main(["report", str(out), "--out", str(report)]) == 0
    return {
        "ledger": out / "C+cur-r0",
        "journal": out / "C+cur-r0" / "journal.jsonl",
        "lock": chain,
        "pack": pack,
        "copy": copy,
        "ratings": pack / "ratings" / "model:m1.jsonl",
        "csv": csv,
        "report": report,
    }


def test_every_artifact_kind_carries_the_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _every_artifact(tmp_path)
    capsys.readouterr()
    block = provenance.current()
    expected_where = {
        "ledger": "ledger run metadata",
        "journal": "ledger run metadata",
        "lock": "lock seq 1 (before-runs)",
        "pack": "pack manifest",
        "copy": "rater's copy",
        "ratings": "rater model:m1",
        "csv": "sidecar metrics.csv.provenance.json",
        "report": "report",
    }
    for kind, path in paths.items():
        assert main(["provenance", str(path), "--json"]) == 0, kind
        got = json.loads(capsys.readouterr().out)
        wheres = [b["where"] for b in got["blocks"]]
        assert any(w.startswith(expected_where[kind]) for w in wheres), (kind, wheres)
        for b in got["blocks"]:
            assert b["provenance"] == block.model_dump(mode="json"), kind
            assert b["note"] == ""
        assert main(["provenance", str(path)]) == 0
        text = capsys.readouterr().out
        assert f"tool: curiosity-tui {block.version}" in text
        for name in provenance.KEY_PACKAGES:
            assert f"{name}: {block.packages[name]}" in text
    # the rater's copy carries the pack's manifest as it was, and its own export block
    assert main(["provenance", str(paths["copy"]), "--json"]) == 0
    wheres = [b["where"] for b in json.loads(capsys.readouterr().out)["blocks"]]
    assert wheres == ["pack manifest", "rater's copy"]
    # a report says who produced it in words too; a CSV's sidecar names its bytes
    assert f"Produced by {block.summary()}." in paths["report"].read_text()
    card = json.loads((tmp_path / "metrics.csv.provenance.json").read_text())
    assert card["file"] == "metrics.csv" and len(card["sha256"]) == 64


def test_a_stale_sidecar_and_a_file_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.csvfile import write_csv

    csv = tmp_path / "t.csv"
    write_csv(csv, ["a"], [[1]])
    csv.write_text("a\n2\n")
    assert main(["provenance", str(csv)]) == 0
    assert "STALE: the file changed after this was written" in capsys.readouterr().out
    other = tmp_path / "other.csv"
    other.write_text("a\n1\n")
    assert main(["provenance", str(other)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no provenance recorded" in err[0] and str(other) in err[0]
    assert main(["provenance", str(tmp_path / "missing.csv")]) != 0
    assert "no such file" in capsys.readouterr().err


def test_a_session_under_another_tool_records_it_and_old_ledgers_stay_as_they_were(
    tmp_path: Path,
) -> None:
    """A session run by a different tool than created the ledger keeps its own block; a
    ledger from before provenance was kept replays to the same state (no block in its meta)."""
    import asyncio

    from curiosity_tui.modelio.client import ModelClient
    from curiosity_tui.offline.research import ResearchResponder
    from curiosity_tui.runs.runner import run_ledger

    older = provenance.current().model_copy(update={"version": "0.0.1"})
    led = Ledger.create(
        tmp_path / "led", RunMeta(name="led", seed="Q?", config="C-cur", provenance=older)
    )
    with ScriptedServer(responder=ResearchResponder()) as server:

        async def go() -> None:
            async with ModelClient(base_url=server.base_url, api_key="x", model="m") as client:
                assert not (await run_ledger(led, client, sessions=2)).failed

        try:
            asyncio.run(go())
        finally:
            led.close()
    with Ledger.open(tmp_path / "led") as again:
        recs = again.session_records()
        assert again.meta.provenance == older
    assert [r.provenance for r in recs] == [provenance.current()] * 2
    root = Path(__file__).resolve().parents[1] / "ledgers" / "example-B-pilot02"
    with Ledger.open(root) as old:
        assert old.meta.provenance is None and old.verify().ok
