"""The fuzz tier, second part (marked ``fuzz``; runs in CI with the normal suite): seeded
damage to journals (with a writer every case), projections, stored sources, relay plans,
keymaps and pack logs and seals, and random numbers on the command line. With
tests/test_fuzz_files.py it makes more than 1,000 cases (``test_the_tier_counts`` checks the
sum). For each case:

- no traceback, never exit 70, at most one line on stderr (exactly one ``error:`` line for a
  failure);
- no silent accept of damaged input: ``verify`` fails on a journal whose chain breaks or
  lost committed events, on a projection that no longer matches, on an altered source; a
  reader shows the undamaged ledger or refuses; an accepted keymap or relay plan holds only
  well-formed names; a number outside its documented range is refused;
- no committed event lost: the journal's committed prefix before a writer is byte for byte
  the same after it (issue 25, item 8).
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_mutators import mutate
from ledger_builders import build

import curiosity_tui.cli as cli_module
from curiosity_tui.app.base import load_keymap
from curiosity_tui.cli import main
from curiosity_tui.errors import EXIT_CODES, CuriosityError
from curiosity_tui.ledger.journal import scan
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.packs.unblind import unblind
from curiosity_tui.runs.relay import load_relay

pytestmark = pytest.mark.fuzz

ALLOWED = set(EXIT_CODES) - {70, 130}
JOURNAL_WRITER_CASES = 150
PROJECTION_CASES = 150
SOURCE_CASES = 60
RELAY_CASES = 120
KEYMAP_CASES = 150
PACK_LOG_CASES = 80
NUMBER_CASES = 200
#: tests/test_fuzz_files.py's cases (journals, plans, chains, packs, ratings, subprocesses)
FILES_CASES = 90 + 120 + 60 + 60 + 60 + 3


@pytest.fixture(autouse=True, scope="module")
def one_parser() -> Iterator[object]:
    parser = cli_module.build_parser()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli_module, "build_parser", lambda: parser)
        yield parser


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse's own refusal of a value it cannot parse
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def check(rc: int, err: str, what: str) -> None:
    assert rc in ALLOWED, f"{what}: exit {rc}: {err}"
    assert "Traceback" not in err, f"{what}: {err}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) <= 1, f"{what}: {len(lines)} lines on stderr:\n{err}"
    if rc >= 2:
        assert lines and lines[0].startswith("curiosity-tui: error: "), f"{what}: {err}"


def files_of(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


@pytest.fixture(scope="module")
def base_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tier") / "run"
    build(path, 3).close()
    src = path.parent / "source.txt"
    src.write_text("Printing in the Empire, 1517-1520: Wittenberg presses.\n")
    assert cli(["sources", "add", str(path), str(src)])[0] == 0
    return path


def _committed(journal: Path) -> tuple[int, int] | None:
    """(committed bytes, committed events) of a journal, or None when its chain breaks."""
    try:
        s = scan(journal)
    except CuriosityError:
        return None
    return s.committed_bytes, len(s.events)


# ------------------------------------------------------------------ journals, with a writer


def test_fuzz_journals_every_case_with_a_writer(base_ledger: Path, tmp_path: Path) -> None:
    rng = random.Random(2501)
    original = (base_ledger / "journal.jsonl").read_bytes()
    full = _committed(base_ledger / "journal.jsonl")
    assert full is not None
    note = tmp_path / "note.txt"
    note.write_text("A later note on the presses.\n")
    outcomes = {"refused": 0, "written": 0}
    for case in range(JOURNAL_WRITER_CASES):
        led = tmp_path / f"j{case}"
        shutil.copytree(base_ledger, led)
        kind, data = mutate(original, rng)
        jpath = led / "journal.jsonl"
        jpath.write_bytes(data)
        what = f"journal case {case} ({kind})"
        committed = _committed(jpath)
        rc, _, err = cli(["verify", str(led)])
        check(rc, err, f"{what}: verify")
        if committed is None or committed[1] < full[1]:  # broken, or committed events gone
            assert rc != 0, f"{what}: verify accepted a damaged journal"
        rc, _, err = cli(["sources", "add", str(led), str(note)])
        check(rc, err, f"{what}: sources add")
        after = jpath.read_bytes()
        outcomes["refused" if rc else "written"] += 1
        if committed is None or rc != 0:
            assert after == data, f"{what}: a refused writer changed the journal"
        else:
            assert after[: committed[0]] == data[: committed[0]], f"{what}: committed bytes lost"
            assert committed[1] >= full[1], f"{what}: a writer accepted a journal missing events"
        shutil.rmtree(led)
    assert outcomes["refused"] > 0 and outcomes["written"] > 0, outcomes


# ------------------------------------------------------------------------------ projection


def _shape(shown: str) -> str:
    """``ledger show`` without its first word (the ledger's folder) and where it read from."""
    return re.sub(r"\A\S+: [^;]*;", "", shown)


def test_fuzz_projection_files(base_ledger: Path, tmp_path: Path) -> None:
    rng = random.Random(2502)
    rc, shown, err = cli(["ledger", "show", str(base_ledger)])
    assert rc == 0, err
    names = sorted(
        k for k in files_of(base_ledger) if k == "ledger.json" or k.startswith("projection/")
    )
    journal = (base_ledger / "journal.jsonl").read_bytes()
    for case in range(PROJECTION_CASES):
        led = tmp_path / f"p{case}"
        shutil.copytree(base_ledger, led)
        name = rng.choice(names)
        kind, data = mutate((led / name).read_bytes(), rng)
        (led / name).write_bytes(data)
        what = f"projection case {case} ({name}, {kind})"
        before = files_of(led)
        rc, out, err = cli(["ledger", "show", str(led)])
        check(rc, err, f"{what}: show")
        same = _shape(out) == _shape(shown)
        assert rc != 0 or same, f"{what}: a reader showed a damaged projection:\n{out}"
        rc, _, err = cli(["verify", str(led)])
        check(rc, err, f"{what}: verify")
        assert files_of(led) == before, f"{what}: a reader changed a file"
        if case % 2 == 0:
            rc, _, err = cli(["run", str(led), "--sessions", "4", "--scripted"])
            check(rc, err, f"{what}: run")
            assert (led / "journal.jsonl").read_bytes()[: len(journal)] == journal, what
        shutil.rmtree(led)


# --------------------------------------------------------------------------------- sources


def test_fuzz_stored_sources(base_ledger: Path, tmp_path: Path) -> None:
    rng = random.Random(2503)
    for case in range(SOURCE_CASES):
        led = tmp_path / f"s{case}"
        shutil.copytree(base_ledger, led)
        stored = next((led / "sources").iterdir())
        what = f"source case {case}"
        if case % 5 == 0:
            stored.unlink()
            kind = "deleted"
        else:
            kind, data = mutate(stored.read_bytes(), rng)
            if data == stored.read_bytes():
                continue
            stored.write_bytes(data)
        rc, _, err = cli(["verify", str(led)])
        check(rc, err, f"{what} ({kind}): verify")
        assert rc == 1, f"{what} ({kind}): verify accepted a damaged source"
        shutil.rmtree(led)


# ------------------------------------------------------------------------- relay, keymap

RELAY = """\
sessions = ["model:A", "human:ana", "model:B", "model:A"]

[models.A]
base_url = "http://127.0.0.1:8080/v1"
model = "model-a"
api_key_env = "KEY_A"

[models.B]
base_url = "http://127.0.0.1:8081/v1"
model = "model-b"
"""
NAME = re.compile(r"\A(model|human):[A-Za-z0-9][A-Za-z0-9._+-]{0,63}\Z")


def test_fuzz_relay_plans(tmp_path: Path) -> None:
    rng = random.Random(2504)
    accepted = 0
    for case in range(RELAY_CASES):
        kind, data = mutate(RELAY.encode(), rng)
        path = tmp_path / f"relay{case}.toml"
        path.write_bytes(data)
        try:
            plan = load_relay(path)
        except CuriosityError as err:
            assert "\n" not in str(err).strip(), f"relay case {case} ({kind}): {err}"
            continue
        accepted += 1
        for item in plan.sessions:
            assert NAME.fullmatch(item), f"relay case {case} ({kind}): accepted {item!r}"
    assert 0 < accepted < RELAY_CASES


KEYMAP = """\
[keymap]
"app.help" = "f2"
"rating.save" = "ctrl+s,f5"

[keymap.browser]
prev_session = "p"
"""
KEY = re.compile(
    r"\A(?:(?:ctrl|shift|alt|meta|super)\+)*(?:[A-Za-z0-9]|f[1-9][0-9]?|[a-z]+(?:_[a-z]+)*)\Z"
)


def test_fuzz_keymaps(tmp_path: Path) -> None:
    rng = random.Random(2505)
    accepted = 0
    for case in range(KEYMAP_CASES):
        kind, data = mutate(KEYMAP.encode(), rng)
        path = tmp_path / f"keys{case}.toml"
        path.write_bytes(data)
        try:
            keymap = load_keymap(path)
        except CuriosityError as err:
            assert "\n" not in str(err).strip() and str(path) in str(err), f"case {case}: {err}"
            continue
        accepted += 1
        for bid, value in keymap.items():
            keys = [k.strip() for k in value.split(",") if k.strip()]
            assert keys and all(KEY.match(k) for k in keys), f"case {case}: {bid}={value!r}"
            assert not {"q", "escape", "ctrl+q"} & set(keys), f"case {case}: {bid}={value!r}"
    assert 0 < accepted < KEYMAP_CASES


# ------------------------------------------------------------------------ pack log, seals


@pytest.fixture(scope="module")
def opened_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tierpack")
    pack = root / "pack"
    build_pack(hand_made_materials(n_per_config=2), load_scheme("pilot-01"), pack, seed=5)
    for rater in ("alice", "bob"):
        s = RatingSession(pack, rater)
        for n, item in enumerate(s.order):
            cat = "built" if (n + len(rater)) % 3 else "fresh"
            s.save(item, {"q1": {"category": cat, "grounds": "g"},
                          "q2": {"category": "some", "grounds": "g"}})  # fmt: skip
    unblind(pack, by="coord")
    return pack


def test_fuzz_pack_log_and_seals(opened_pack: Path, tmp_path: Path) -> None:
    rng = random.Random(2506)
    targets = ["log.jsonl", "key_opened.jsonl", "../pack.key.opened.jsonl"]
    for case in range(PACK_LOG_CASES):
        root = tmp_path / f"c{case}"
        shutil.copytree(opened_pack.parent, root)
        pack = root / "pack"
        name = rng.choice(targets)
        target = (pack / name).resolve()
        kind, data = mutate(target.read_bytes(), rng)
        target.write_bytes(data)
        what = f"pack case {case} ({name}, {kind})"
        log_before = (pack / "log.jsonl").read_bytes()
        for argv in (
            ["agreement", str(pack), "--boot", "20"],
            ["unblind", str(pack), "--by", "coord"],
            ["adjudication", "list", str(pack)],
        ):
            rc, _, err = cli(argv)
            check(rc, err, f"{what}: {argv[0]}")
        assert (pack / "log.jsonl").read_bytes().startswith(log_before), f"{what}: log rewritten"
        shutil.rmtree(root)


# ----------------------------------------------------------------------- CLI numbers

ODD_NUMBERS = ["-1", "0", "nan", "inf", "-inf", "1e400", "10" * 12, "-0", "1.5", "0x10",
               "", " ", "1_000", "NaN", "+5", "9" * 30, "3", "25", "0.2"]  # fmt: skip


def _in_range(flag: str, raw: str) -> bool | None:
    """Whether ``raw`` is inside the documented range of ``flag`` (docs/errors.md); None
    when argparse itself refuses the text (not a number of the flag's type)."""
    as_int = flag in ("--boot", "--seed", "--permutations", "--sessions", "--context-window")
    try:
        value: float = int(raw) if as_int else float(raw)
    except ValueError:
        return None
    ranges = {
        "--boot": (10, 100_000),
        "--seed": (0, 2**63 - 1),
        "--permutations": (20, 20_000),
        "--sessions": (1, 100_000),
        "--context-window": (512, 100_000_000),
    }
    if flag in ranges:
        lo, hi = ranges[flag]
        return lo <= value <= hi
    if flag == "--timeout":
        return math.isfinite(value) and 0 < value <= 86_400
    return math.isfinite(value) and 0 < value <= 1  # --epsilons


def test_fuzz_cli_numbers(base_ledger: Path, opened_pack: Path, tmp_path: Path) -> None:
    rng = random.Random(2507)
    led = tmp_path / "numbers"
    shutil.copytree(base_ledger, led)
    journal = (led / "journal.jsonl").read_bytes()
    commands = [
        (["agreement", str(opened_pack)], "--boot"),
        (["agreement", str(opened_pack), "--boot", "10"], "--seed"),
        (["sweep", str(led)], "--epsilons"),
        (["pack", "leakcheck", str(opened_pack)], "--permutations"),
        (["run", str(led), "--scripted", "--sessions", "3"], "--timeout"),
        (["run", str(led), "--scripted", "--sessions", "3"], "--context-window"),
        (["run", str(led), "--scripted"], "--sessions"),
    ]
    refused = 0
    for case in range(NUMBER_CASES):
        argv, flag = rng.choice(commands)
        raw = rng.choice(ODD_NUMBERS)
        ok = _in_range(flag, raw)
        if ok and flag in ("--sessions", "--permutations", "--timeout", "--context-window"):
            continue  # in range: the command would run in full (covered elsewhere)
        what = f"number case {case}: {argv[0]} {flag} {raw!r}"
        rc, _, err = cli([*argv, f"{flag}={raw}"])
        if ok is None:  # argparse's own refusal: usage and one error line, exit 2
            assert rc == 2 and "Traceback" not in err, what
            refused += 1
            continue
        check(rc, err, what)
        if not ok:
            assert rc == 2 and flag in err, f"{what}: accepted ({rc}): {err}"
            refused += 1
        assert (led / "journal.jsonl").read_bytes() == journal, f"{what}: the journal changed"
    assert refused > NUMBER_CASES // 3


def test_the_tier_counts() -> None:
    total = (
        JOURNAL_WRITER_CASES + PROJECTION_CASES + SOURCE_CASES + RELAY_CASES + KEYMAP_CASES
        + PACK_LOG_CASES + NUMBER_CASES + FILES_CASES
    )  # fmt: skip
    assert total >= 1000, total
