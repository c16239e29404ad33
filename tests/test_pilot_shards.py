"""``pilot run --shard I/N`` and ``pilot status`` (issue 14.5): the shards of a plan are
disjoint and cover it, and metrics merged over the shards equal an unsharded pilot's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.errors import InputError
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.protocol.configs import CONFIG_NAMES
from curiosity_tui.runs.runner import RunSpec, plan_runs, run_pilot
from curiosity_tui.runs.shards import (
    ManifestRun,
    Shard,
    new_manifest,
    parse_shard,
    pilot_status,
    shard_of,
    write_manifest,
)
from curiosity_tui.runs.workers import ClientSpec, run_pilot_workers

SEED = "Did the printing press cause the Reformation?"
PLAN = """\
name = "shards"
configurations = ["B-armed+cur", "C+cur", "C-cur"]
runs = 2
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "live_nodes"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["max_depth", "nodes_worked"]
"""


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 25])
def test_shards_are_disjoint_cover_the_plan_and_balance(count: int) -> None:
    specs = plan_runs(seed="q", configurations=list(CONFIG_NAMES), runs=3)
    names = [s.name for s in specs]
    shares = [
        [s.name for s in shard_of(specs, Shard(index=i, count=count))] for i in range(1, count + 1)
    ]
    flat = [n for share in shares for n in share]
    assert len(flat) == len(set(flat))  # disjoint
    assert sorted(flat) == sorted(names)  # cover
    sizes = [len(s) for s in shares]
    assert max(sizes) - min(sizes) <= 1
    again = [[s.name for s in shard_of(specs, Shard(index=i, count=count))] for i in (1, count)]
    assert again == [shares[0], shares[-1]]  # deterministic


@pytest.mark.parametrize("bad", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"])
def test_bad_shard_is_refused_in_one_line(bad: str) -> None:
    with pytest.raises(InputError, match="--shard"):
        parse_shard(bad)


def test_cli_refuses_a_bad_shard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    args = ["pilot", "run", str(plan), "--out", str(tmp_path / "o"), "--unregistered"]
    assert main([*args, "--scripted", "--shard", "3/2"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--shard 3/2" in err[0]
    assert not (tmp_path / "o").exists()


class _NoHistory(dict):  # type: ignore[type-arg]
    """Forgets every request, so a reply never depends on which runs came first."""

    def get(self, key: object, default: object = None) -> int:  # type: ignore[override]
        return 0


class HistoryFreeResponder(DemoResponder):
    """The demo replies, but the same request always gets the same reply: the built-in
    demo varies candidates by how often it saw a request, across all runs of a server."""

    def __init__(self) -> None:
        super().__init__()
        self._seen = _NoHistory()


def _metrics(capsys: pytest.CaptureFixture[str], *paths: Path) -> dict:  # type: ignore[type-arg]
    capsys.readouterr()
    assert main(["metrics", *map(str, paths), "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _ledgers(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if (p / "journal.jsonl").is_file())


def test_merged_metrics_of_the_shards_equal_the_unsharded_pilot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = plan_runs(seed=SEED, configurations=["B-armed+cur", "C+cur", "C-cur"], runs=2)
    with ScriptedServer(responder=HistoryFreeResponder()) as srv:
        cs = ClientSpec(model="scripted", base_url=srv.base_url, api_key="sk-test")

        async def pilot(share: list[RunSpec], out: Path) -> None:
            client = cs.build()
            try:
                res = await run_pilot(share, out, client, sessions=2, concurrency=6)
            finally:
                await client.aclose()
            assert not [r.failed for r in res if r.failed]

        asyncio.run(pilot(specs, tmp_path / "all"))
        outs = [tmp_path / f"shard{i}" for i in (1, 2, 3)]
        asyncio.run(pilot(shard_of(specs, Shard(index=1, count=3)), outs[0]))
        res = run_pilot_workers(  # shard 2 over two worker processes
            shard_of(specs, Shard(index=2, count=3)), outs[1], cs, sessions=2, workers=2
        )
        assert [r.sessions_done for r in res] == [2, 2] and not any(r.failed for r in res)
        asyncio.run(pilot(shard_of(specs, Shard(index=3, count=3)), outs[2]))

    flat = [n for o in outs for n in _ledgers(o)]
    assert len(flat) == len(set(flat)) == 6 and sorted(flat) == _ledgers(tmp_path / "all")
    merged = _metrics(capsys, *outs)
    whole = _metrics(capsys, tmp_path / "all")
    assert merged["metrics"]["nodes_worked"]["C+cur"]["n"] == 2
    assert merged == whole


def test_cli_shards_and_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    outs = [tmp_path / "m1", tmp_path / "m2"]
    for i, (out, workers) in enumerate(zip(outs, ("1", "2"), strict=True), start=1):
        args = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--unregistered"]
        assert main([*args, "--shard", f"{i}/3", "--workers", workers]) == 0
    assert _ledgers(outs[0]) == ["B-armed+cur-r0", "C+cur-r1"]
    assert _ledgers(outs[1]) == ["B-armed+cur-r1", "C-cur-r0"]
    st = pilot_status(outs)
    assert (st.shard_count, st.missing_shards, st.plan_runs) == (3, ["3/3"], 6)
    assert (st.runs_done, st.sessions_done, st.sessions_total) == (4, 8, 12)
    assert all(s.state.startswith("finished") for s in st.shards)
    capsys.readouterr()
    assert main(["pilot", "status", str(outs[1]), "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["missing_shards"] == ["1/3", "3/3"] and one["runs_done"] == 2
    assert main(["pilot", "status", *map(str, outs)]) == 0
    text = capsys.readouterr().out
    assert "shard 3/3: no manifest" in text and "total: 4/6 runs done" in text


def test_status_shows_failed_and_unfinished_shards(tmp_path: Path) -> None:
    m = new_manifest("ab" * 32, Shard(index=1, count=2), 4, 3, ["x-r0", "x-r1"], 1)
    m = m.model_copy(
        update={
            "runs": [ManifestRun(name="x-r0", state="failed", failure="session 1: boom"), m.runs[1]]
        }
    )
    write_manifest(tmp_path, m)
    st = pilot_status([tmp_path])
    (s,) = st.shards
    assert (s.runs, s.runs_done, s.runs_failed, s.sessions_done) == (2, 0, 1, 0)
    assert "not finished" in s.state and s.failures == ["x-r0: session 1: boom"]
    assert st.missing_shards == ["2/2"] and st.sessions_total == 12


def test_status_of_a_directory_without_manifest_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pilot", "status", str(tmp_path)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no pilot manifest" in err[0]
    (tmp_path / ".pilot").mkdir()
    (tmp_path / ".pilot" / "shard-1-of-1.json").write_text("{not json")
    assert main(["pilot", "status", str(tmp_path)]) != 0
    assert "not a shard manifest" in capsys.readouterr().err


def test_a_worker_that_fails_leaves_its_runs_failed_with_the_reason(tmp_path: Path) -> None:
    specs = plan_runs(seed=SEED, configurations=["C-cur"], runs=2)
    cs = ClientSpec(model="", base_url="http://127.0.0.1:9", api_key="sk-test")  # no model
    res = run_pilot_workers(specs, tmp_path, cs, sessions=1, workers=2)
    assert [r.ledger for r in res] == ["C-cur-r0", "C-cur-r1"]
    for k, r in enumerate(res, start=1):
        assert r.sessions_done == 0
        ((session, why),) = r.failed
        assert session == 0 and why.startswith(f"worker {k} failed: ModelConfigError")
