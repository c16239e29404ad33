"""The fuzz tier: journals, plans, packs and ratings files mutated at random (bit flips,
truncations, re-encodings, line edits, odd JSON values; seeded), then read by the commands
that read them. Every case must end with an exit code from the documented set (never the
internal-error code), at most one line on stderr (exactly one ``error:`` line for a failure),
no traceback, and no byte of committed data lost: readers change nothing, a writer only cuts
what follows the last commit marker, the pack log only grows.

The CLI runs in-process (``cli.main`` with argv, stderr captured); a handful of cases go
through a subprocess so that a real process's stderr is checked too. The projection
(``ledger.json``) has its own bit-flip tests elsewhere; here it is left as it was built.
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_mutators import mutate
from ledger_builders import build
from test_prereg import plan_text

import curiosity_tui.cli as cli_module
from curiosity_tui.analysis.plan import PLAN_NAME_RE, parse_plan
from curiosity_tui.cli import main
from curiosity_tui.errors import EXIT_CODES, CuriosityError
from curiosity_tui.ledger.journal import scan
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.pack import default_key_path
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme

pytestmark = pytest.mark.fuzz  # the fuzz tier (with tests/test_fuzz_tier.py)

ALLOWED = set(EXIT_CODES) - {70, 130}
JOURNAL_CASES = 90
WRITER_EVERY = 6  # every 6th journal case also opens the ledger for writing (``run``)
PLAN_CASES = 120
PACK_CASES = 60
RATINGS_CASES = 60
CHAIN_CASES = 60


@pytest.fixture(autouse=True, scope="module")
def one_parser() -> Iterator[object]:
    """Build the argument parser once: argparse's construction (its gettext look-ups) costs
    more than most of the commands it parses for, and a parser can parse many times."""
    parser = cli_module.build_parser()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli_module, "build_parser", lambda: parser)
        yield parser


def cli(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, err.getvalue()


def check(rc: int, err: str, what: str) -> None:
    assert rc in ALLOWED, f"{what}: exit {rc}: {err}"
    assert "Traceback" not in err, f"{what}: {err}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) <= 1, f"{what}: {len(lines)} lines on stderr:\n{err}"
    if rc >= 2:
        assert lines and lines[0].startswith("curiosity-tui: error: "), f"{what}: {err}"


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


# --------------------------------------------------------------------------- journals


@pytest.fixture(scope="module")
def base_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small C ledger: three sessions (nodes, facts, snapshots, records) and a source."""
    path = tmp_path_factory.mktemp("fuzz") / "run"
    build(path, 3).close()
    src = path.parent / "source.txt"
    src.write_text("Printing in the Empire, 1517-1520: Wittenberg presses.\n")
    assert cli(["sources", "add", str(path), str(src)])[0] == 0
    return path


def _committed_prefix(journal: Path) -> int | None:
    try:
        return scan(journal).committed_bytes
    except CuriosityError:
        return None


def test_fuzz_journals(base_ledger: Path, tmp_path: Path) -> None:
    rng = random.Random(1201)
    original = (base_ledger / "journal.jsonl").read_bytes()
    kinds: dict[str, int] = {}
    for case in range(JOURNAL_CASES):
        led = tmp_path / f"j{case}"
        shutil.copytree(base_ledger, led)
        kind, data = mutate(original, rng)
        kinds[kind] = kinds.get(kind, 0) + 1
        jpath = led / "journal.jsonl"
        jpath.write_bytes(data)
        before = snapshot(led)
        what = f"journal case {case} ({kind})"
        for argv in (["ledger", "show", str(led)], ["verify", str(led)]):
            rc, err = cli(argv)
            check(rc, err, f"{what}: {argv[0]}")
        if case % 3 == 0:
            for argv in (
                ["ledger", "render", str(led)],
                ["audit", str(led)],
                ["metrics", str(led)],
            ):
                rc, err = cli(argv)
                check(rc, err, f"{what}: {argv[0]}")
        assert snapshot(led) == before, f"{what}: a reader changed a file"
        if case % WRITER_EVERY == 0:
            committed = _committed_prefix(jpath)
            rc, err = cli(["run", str(led), "--sessions", "1", "--scripted"])
            assert rc in ALLOWED and "Traceback" not in err, f"{what}: run: exit {rc}: {err}"
            after = jpath.read_bytes()
            if committed is None:  # refused: the damaged journal is left exactly as it was
                assert after == data, f"{what}: run changed a journal it refused"
            else:  # at most the uncommitted tail was cut
                assert after[:committed] == data[:committed], f"{what}: committed bytes lost"
        shutil.rmtree(led)
    assert len(kinds) >= 8, kinds  # the seed exercises most kinds of damage


def test_fuzz_journals_in_a_real_process(
    base_ledger: Path, tmp_path: Path, subprocess_env: dict[str, str]
) -> None:
    rng = random.Random(77)
    original = (base_ledger / "journal.jsonl").read_bytes()
    for case, cmd in enumerate((["ledger", "show"], ["verify"], ["ledger", "render"])):
        led = tmp_path / f"p{case}"
        shutil.copytree(base_ledger, led)
        kind, data = mutate(original, rng)
        (led / "journal.jsonl").write_bytes(data)
        proc = subprocess.run(
            [sys.executable, "-m", "curiosity_tui", *cmd, str(led)],
            capture_output=True,
            text=True,
            env=subprocess_env,
            timeout=120,
        )
        check(proc.returncode, proc.stderr, f"subprocess case {case} ({kind}): {cmd}")
        assert (led / "journal.jsonl").read_bytes() == data


# --------------------------------------------------------------------------- plans


def test_fuzz_plans(tmp_path: Path) -> None:
    rng = random.Random(1202)
    original = plan_text().encode("utf-8")
    accepted = 0
    for case in range(PLAN_CASES):
        kind, data = mutate(original, rng)
        plan = tmp_path / f"plan{case}.toml"
        plan.write_bytes(data)
        chain = tmp_path / f"out{case}" / "prereg.jsonl"
        rc, err = cli(
            ["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)]
        )
        what = f"plan case {case} ({kind})"
        check(rc, err, what)
        assert rc in (0, 2), f"{what}: exit {rc}: {err}"
        if rc == 2:
            assert not chain.exists(), f"{what}: a refused plan reached the chain"
            continue
        accepted += 1
        p = parse_plan(data.decode("utf-8"), source=str(plan))  # what was locked is in range
        assert type(p.runs) is int and 1 <= p.runs <= 1000
        assert type(p.sessions) is int and 1 <= p.sessions <= 1000
        assert math.isfinite(p.epsilon) and 0 < p.epsilon < 1
        assert PLAN_NAME_RE.fullmatch(p.name) and ".." not in p.name
    assert accepted < PLAN_CASES  # most damage is refused ...
    assert accepted > 0  # ... and harmless edits (a comment, a changed prose field) are not


def test_fuzz_prereg_chains(tmp_path: Path) -> None:
    """A damaged chain is refused by ``verify`` and ``lock`` (nothing appended to it)."""
    rng = random.Random(1205)
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text())
    base = tmp_path / "base" / "prereg.jsonl"
    for stage in ("before-runs", "after-shakeout"):
        argv = [
            "prereg",
            "lock",
            str(plan),
            "--stage",
            stage,
            "--reason",
            "r",
            "--chain",
            str(base),
        ]
        assert cli(argv)[0] == 0
    original = base.read_bytes()
    for case in range(CHAIN_CASES):
        kind, data = mutate(original, rng)
        chain = tmp_path / f"c{case}" / "prereg.jsonl"
        chain.parent.mkdir()
        chain.write_bytes(data)
        what = f"chain case {case} ({kind})"
        rc_verify, err = cli(["prereg", "verify", str(chain)])
        check(rc_verify, err, f"{what}: verify")
        rc, err = cli(["prereg", "show", str(chain)])
        check(rc, err, f"{what}: show")
        assert chain.read_bytes() == data, f"{what}: a reader changed the chain"
        stage = "after-mechanical-results"
        rc, err = cli(
            ["prereg", "lock", str(plan), "--stage", stage, "--reason", "r", "--chain", str(chain)]
        )
        check(rc, err, f"{what}: lock")
        if rc != 0 or rc_verify != 0:
            assert rc != 0 and chain.read_bytes() == data, f"{what}: locked onto a bad chain"
        else:
            assert chain.read_bytes().startswith(data), f"{what}: the chain was rewritten"


# --------------------------------------------------------------------------- packs, ratings


@pytest.fixture(scope="module")
def base_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzzpack")
    out = root / "pack"
    build_pack(hand_made_materials(n_per_config=2), load_scheme("pilot-01"), out, seed=5)
    for rater in ("alice", "bob"):
        s = RatingSession(out, rater)
        for n, item in enumerate(s.order):
            answers = {
                "q1": {"category": "built" if (n + len(rater)) % 3 else "fresh", "grounds": "g"},
                "q2": {"category": "some", "grounds": "g"},
            }
            s.save(item, answers)
    return out


def _copy_pack(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest / "pack")
    shutil.copy(default_key_path(base), default_key_path(dest / "pack"))
    return dest / "pack"


def _fuzz_pack_files(base: Path, tmp_path: Path, seed: int, cases: int, files: list[str]) -> None:
    rng = random.Random(seed)
    for case in range(cases):
        case_dir = tmp_path / f"c{case}"
        pack = _copy_pack(base, case_dir)
        name = rng.choice(files)
        target = default_key_path(pack) if name == "KEY" else pack / name
        kind, data = mutate(target.read_bytes(), rng)
        target.write_bytes(data)
        before = snapshot(case_dir)
        log = pack / "log.jsonl"
        what = f"{name} case {case} ({kind})"
        for argv in (
            ["agreement", str(pack), "--boot", "20"],
            ["unblind", str(pack), "--by", "coord"],
        ):
            rc, err = cli(argv)
            check(rc, err, f"{what}: {argv[0]}")
        after = snapshot(case_dir)
        for rel, content in before.items():
            if rel.endswith("log.jsonl"):  # the pack log may only grow
                assert after[rel].startswith(content), f"{what}: pack log rewritten"
            else:
                assert after.get(rel) == content, f"{what}: {rel} changed"
        assert log.exists() or not (base / "log.jsonl").exists()
        shutil.rmtree(case_dir)


def test_fuzz_pack_files(base_pack: Path, tmp_path: Path) -> None:
    _fuzz_pack_files(base_pack, tmp_path, 1203, PACK_CASES, ["manifest.json", "items.jsonl", "KEY"])


def test_fuzz_ratings_files(base_pack: Path, tmp_path: Path) -> None:
    _fuzz_pack_files(
        base_pack, tmp_path, 1204, RATINGS_CASES, ["ratings/alice.jsonl", "ratings/bob.jsonl"]
    )
