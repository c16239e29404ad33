"""The adjudication file mutated at random (seeded; the fuzz tier's mutators), then read by
``adjudication list`` and ``unblind``: an allowed exit code, at most one line on stderr, no
traceback, and nothing changed but the pack log, which only grows."""

from __future__ import annotations

import contextlib
import io
import random
import shutil
from pathlib import Path

import pytest
from fuzz_mutators import mutate

from curiosity_tui.cli import main
from curiosity_tui.errors import EXIT_CODES
from curiosity_tui.packs.adjudication import adjudication_path
from curiosity_tui.packs.disagreement import adjudicate
from curiosity_tui.packs.pack import Pack, default_key_path
from tests.adjudication_fixtures import build_rated_pack

CASES = 40
ALLOWED = set(EXIT_CODES) - {70, 130}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pack = build_rated_pack(tmp_path_factory.mktemp("adjfuzz"))
    order = Pack.open(pack).order
    adjudicate(pack, order[0], "q1", "fresh", "starts over", by="cy")
    adjudicate(pack, order[0], "q1", "built", "on reflection", by="cy", replaces=1)
    adjudicate(pack, order[1], "q1", "fresh", "starts over", by="cy")
    return pack


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def test_fuzz_adjudication_file(base: Path, tmp_path: Path) -> None:
    rng = random.Random(2001)
    original = adjudication_path(base).read_bytes()
    for case in range(CASES):
        root = tmp_path / f"c{case}"
        pack = root / "pack"
        shutil.copytree(base, pack)
        shutil.copy(default_key_path(base), default_key_path(pack))
        kind, data = mutate(original, rng)
        adjudication_path(pack).write_bytes(data)
        before = _files(root)
        for argv in (["adjudication", "list", str(pack)], ["unblind", str(pack), "--by", "cy"]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = main(argv)
            what = f"case {case} ({kind}): {argv[0]}: exit {rc}: {err.getvalue()}"
            lines = [x for x in err.getvalue().splitlines() if x.strip()]
            assert rc in ALLOWED and "Traceback" not in err.getvalue() and len(lines) <= 1, what
            if rc:
                assert lines[0].startswith("curiosity-tui: error: "), what
        after = _files(root)
        for rel, content in before.items():
            if rel.endswith("log.jsonl"):
                assert after[rel].startswith(content), f"case {case}: pack log rewritten"
            else:
                assert after.get(rel) == content, f"case {case}: {rel} changed"
        shutil.rmtree(root)
