"""Negative, NaN, infinite, zero and huge numbers on the command line are refused in one
line naming the flag, with the documented range (docs/errors.md, "Numbers"; issue 25, item
9): none exits 70, none grows memory without bound, none is silently accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.schemes import load_scheme

CASES = [
    ("agreement", ["--seed", "-1"], "--seed -1"),
    ("agreement", ["--boot", "0"], "--boot 0"),
    ("agreement", ["--boot", str(10**23)], "--boot 1000000"),
    ("sweep", ["--epsilons", "nan,0.1"], "--epsilons nan"),
    ("sweep", ["--epsilons", "0.1,-1"], "--epsilons -1"),
    ("sweep", ["--epsilons", "inf"], "--epsilons inf"),
    ("run", ["--timeout", "nan"], "--timeout nan"),
    ("run", ["--timeout", "-1"], "--timeout -1"),
    ("run", ["--timeout", "0"], "--timeout 0"),
    ("run", ["--timeout", "inf"], "--timeout inf"),
    ("run", ["--context-window", "1"], "--context-window 1"),
    ("run", ["--sessions", "1000000000"], "--sessions 1000000000"),
    ("run", ["--max-retries", "-1"], "--max-retries -1"),
    ("leakcheck", ["--permutations", "-1"], "--permutations -1"),
    ("pilot", ["--workers", "1000000000"], "--workers 1000000000"),
    ("pilot", ["--concurrency", "0"], "--concurrency 0"),
    ("build", ["--controls", "-1"], "--controls -1"),
    ("build", ["--min-raters", "100000"], "--min-raters 100000"),
]


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("numbers")
    pack = root / "pack"
    build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), pack, seed=1)
    led = root / "run"
    Ledger.create(
        led, RunMeta(name="run", seed="Why did pamphlets spread?", config="C-cur")
    ).close()
    return {"pack": pack, "run": led}


@pytest.mark.parametrize(("command", "extra", "named"), CASES)
def test_bad_numbers_are_refused_in_one_line(
    targets: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    command: str,
    extra: list[str],
    named: str,
) -> None:
    if command == "run":
        argv = [
            "run",
            str(targets["run"]),
            "--scripted",
            *(["--sessions", "2"] if "--sessions" not in extra else []),
            *extra,
        ]
    elif command == "sweep":
        argv = ["sweep", str(targets["run"]), *extra]
    elif command == "pilot":
        plan = targets["run"].parent / "plan.toml"
        argv = ["pilot", "run", str(plan), "--out", str(plan.parent / "out"), "--scripted", *extra]
    elif command == "build":
        out = targets["run"].parent / "newpack"
        argv = ["pack", "build", str(targets["run"]), "--out", str(out), *extra]
    elif command == "leakcheck":
        argv = ["pack", "leakcheck", str(targets["pack"]), *extra]
    else:
        argv = [command, str(targets["pack"]), *extra]
    before = (targets["run"] / "journal.jsonl").read_bytes()
    rc = main(argv)
    err = capsys.readouterr().err
    lines = err.strip("\n").split("\n")
    assert rc == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert named in lines[0], lines[0]
    assert (targets["run"] / "journal.jsonl").read_bytes() == before
