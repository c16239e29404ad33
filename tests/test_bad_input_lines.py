"""Bad input is one line naming what and where, a non-zero exit, and nothing stored lost:
plan values out of range, files that are not UTF-8, an unknown rating category, a symlinked
source, a model reply with a lone surrogate, terminal control sequences in model text."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from test_prereg import plan_text

from curiosity_tui.analysis.plan import PlanError, parse_plan
from curiosity_tui.cli import main
from curiosity_tui.errors import EXIT_CODES
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.scripted_server import Script, ScriptedServer, ScriptRule
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.runs.runner import run_ledger
from curiosity_tui.textsafe import escape_controls, show_invisible, terminal_safe
from curiosity_tui.widgets.literal import clean

SEED = "Did the printing press cause the Reformation?"


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("curiosity-tui: error: "), err
    return lines[0]


# --------------------------------------------------------------------------- plan values


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        (
            "sessions = 5",
            "sessions = 1e9",
            r"sessions: Input should be a valid integer .*1000000000",
        ),
        ("runs = 3", "runs = 100000000", "runs: Input should be less than or equal to 1000"),
        ("runs = 3", "runs = 3.0", "runs: Input should be a valid integer"),
        ("runs = 3", "runs = true", "runs: Input should be a valid integer"),
        ("sessions = 5", "sessions = 1001", "sessions: Input should be less than or equal to 1000"),
        ("epsilon = 0.15", "epsilon = inf", "epsilon: Input should be a finite number"),
        ("epsilon = 0.15", "epsilon = nan", "epsilon: Input should be a finite number"),
        ("epsilon = 0.15", "epsilon = 0", "epsilon: Input should be greater than 0"),
        ("epsilon = 0.15", "epsilon = 1.0", "epsilon: Input should be less than 1"),
        ("margin = 0.0", "margin = inf", "rule.margin: Input should be a finite number"),
        (
            "session_completion_tokens = 4000",
            "session_completion_tokens = 4000.5",
            "budgets.session_completion_tokens: Input should be a valid integer",
        ),
        ('name = "pilot-test"', 'name = "../../etc/x"', "not safe as a file name"),
        ('name = "pilot-test"', 'name = "a/b"', "not safe as a file name"),
        ('name = "pilot-test"', 'name = "x..y"', "not safe as a file name"),
        ('name = "pilot-test"', 'name = ".hidden"', "not safe as a file name"),
    ],
)
def test_plan_values_are_range_checked(old: str, new: str, reason: str) -> None:
    with pytest.raises(PlanError, match=reason) as info:
        parse_plan(plan_text(**{old: new}), source="p.toml")
    assert str(info.value).startswith("p.toml:")
    # the good value parses, so it is the change that is refused
    assert parse_plan(plan_text(), source="p.toml").epsilon == 0.15


def test_prereg_lock_refuses_a_path_like_plan_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(**{'name = "pilot-test"': 'name = "../../etc/x"'}))
    chain = tmp_path / "out" / "prereg.jsonl"
    rc = main(["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)])
    assert rc == 2
    assert f"{plan}:1: name:" in one_error_line(capsys)
    assert not chain.exists()


def test_non_utf8_plan_names_file_line_and_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_bytes(
        plan_text().replace('model = "test-model"', 'model = "t\xe9"').encode("latin-1")
    )
    rc = main(
        ["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(tmp_path / "c")]
    )
    assert rc == 2
    line = one_error_line(capsys)
    assert f"{plan}:6: not UTF-8 text (bad byte 0xe9" in line


# --------------------------------------------------------------------------- packs


def _rated_pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(n_per_config=2), load_scheme("pilot-01"), out, seed=3)
    for rater in ("alice", "bob"):
        s = RatingSession(out, rater)
        for item in s.order:
            answers = {"q1": {"category": "built", "grounds": "g"}}
            answers["q2"] = {"category": "some", "grounds": "g"}
            s.save(item, answers)
    return out


def test_unblind_on_an_unknown_category_names_file_item_and_category(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = _rated_pack(tmp_path)
    f = sorted((pack / "ratings").glob("*.jsonl"))[0]
    lines = f.read_text().splitlines()
    rec = json.loads(lines[0])
    qid = next(iter(rec["answers"]))
    rec["answers"][qid]["category"] = "made-up"
    f.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    before = f.read_bytes()
    rc = main(["unblind", str(pack), "--by", "coord"])
    assert rc == 2
    line = one_error_line(capsys)
    assert str(f) in line and f"item {rec['item']}" in line and "unknown category 'made-up'" in line
    assert f.read_bytes() == before


def test_non_utf8_ratings_file_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = _rated_pack(tmp_path)
    f = sorted((pack / "ratings").glob("*.jsonl"))[0]
    lines = f.read_bytes().splitlines()
    lines[1] = lines[1].replace(b'"', b'"\xff', 1)
    f.write_bytes(b"\n".join(lines) + b"\n")
    rc = main(["agreement", str(pack)])
    assert rc == 2
    assert f"{f}:2: not UTF-8 text" in one_error_line(capsys)


# --------------------------------------------------------------------------- sources


def test_sources_add_refuses_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file_bytes
) -> None:
    led = tmp_path / "run"
    Ledger.create(led, RunMeta(name="run", seed=SEED, config="C-cur")).close()
    real = tmp_path / "real.txt"
    real.write_text("Printing in the Empire, 1517-1520.\n")
    link = tmp_path / "passwd.txt"
    link.symlink_to("/etc/passwd")
    before = file_bytes(led)
    rc = main(["sources", "add", str(led), str(link)])
    assert rc == 2
    line = one_error_line(capsys)
    assert f"{link}: is a symbolic link (to /etc/passwd)" in line
    assert file_bytes(led) == before
    assert main(["sources", "add", str(led), str(real)]) == 0  # the real file is fine
    with Ledger.open(led) as opened:
        assert [s.size for s in opened.sources()] == [real.stat().st_size]


def test_sources_add_refuses_a_fifo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    led = tmp_path / "run"
    Ledger.create(led, RunMeta(name="run", seed=SEED, config="C-cur")).close()
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    assert main(["sources", "add", str(led), str(fifo)]) == 2  # does not block on the pipe
    assert "not a regular file" in one_error_line(capsys)


# --------------------------------------------------------------------------- model text


LONE = "\ud800"


def _armed_run(tmp_path: Path, reply: object) -> Path:
    path = tmp_path / "run"
    Ledger.create(path, RunMeta(name="run", seed=SEED, config="B-armed-cur")).close()
    script = Script(rules=[ScriptRule(kind="self-ask", reply=reply)])  # type: ignore[arg-type]
    with ScriptedServer(script) as srv:
        client = ModelClient(base_url=srv.base_url, api_key="x", model="scripted")

        async def go():  # type: ignore[no-untyped-def]
            try:
                with Ledger.open(path, write=True) as led:
                    return await run_ledger(led, client, sessions=1)
            finally:
                await client.aclose()

        result = asyncio.run(go())
    assert not result.failed, result.failed
    return path


@pytest.mark.parametrize(
    "reply",
    [
        # a raw lone surrogate in the message content
        {"questions": [{"text": f"Why {LONE} here?", "parent": None}], "facts": [], "actions": []},
        # a "\ud800" escape inside the model's JSON text
        '{"questions": [{"text": "Why \\ud800 here?", "parent": null}], "facts": [], "actions": []}',
    ],
    ids=["raw", "json-escape"],
)
def test_lone_surrogate_in_a_reply_is_replaced_and_recorded(tmp_path: Path, reply: object) -> None:
    path = _armed_run(tmp_path, reply)
    assert verify(path).ok
    with Ledger.open(path) as led:
        texts = [n["text"] for n in led.raw_nodes().values()]
        rec = led.session_record(1)
    assert "Why \ufffd here?" in texts
    assert rec is not None and rec.status == "committed"
    assert [c.replaced_chars for c in rec.calls if c.kind == "self-ask"] == [1]
    raw = (path / "journal.jsonl").read_bytes()
    raw.decode("utf-8")  # the journal is valid UTF-8 throughout


# --------------------------------------------------------------------------- terminal safety


def test_escapes_make_controls_and_invisibles_visible() -> None:
    hostile = "a\x1b[2J\x1b]0;owned\x07b\x9bc\u200bd\u202ee\ufeff\n\tf"
    safe = terminal_safe(hostile)
    for ch in "\x1b\x07\x9b\u200b\u202e\ufeff":
        assert ch not in safe
    assert safe == "a␛[2J␛]0;owned␇b\\u009bc⟨U+200B⟩d⟨U+202E⟩e⟨U+FEFF⟩\n\tf"
    assert escape_controls("plain text\n") == "plain text\n"
    assert show_invisible("zero\u200dwidth") == "zero⟨U+200D⟩width"
    assert clean("x\u2067y\u00adz") == "x⟨U+2067⟩y⟨U+00AD⟩z"  # the app's literal text


def test_ledger_render_escapes_unless_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run"
    seed = "Who printed \x1b]0;pwned\x07 this\x1b[2J? \u202eevil\u202c"
    Ledger.create(path, RunMeta(name="run", seed=seed, config="C-cur")).close()
    assert main(["ledger", "render", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "␛]0;pwned␇ this␛[2J? ⟨U+202E⟩evil⟨U+202C⟩" in out
    assert main(["ledger", "render", str(path), "--raw"]) == 0
    assert seed in capsys.readouterr().out


def test_exit_codes_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "errors.md").read_text()
    for code, meaning in EXIT_CODES.items():
        assert f"| {code} |" in doc, (code, meaning)


# --------------------------------------------------------------------------- non-UTF-8 arguments


def test_non_utf8_arguments_are_refused_before_anything_is_written(
    tmp_path: Path, python: str, subprocess_env: dict[str, str], file_bytes
) -> None:
    import os
    import subprocess

    def cli_bytes(*args: bytes) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [python.encode(), b"-m", b"curiosity_tui", *args],
            capture_output=True,
            text=True,
            errors="replace",
            env=subprocess_env,
            timeout=120,
        )

    target = os.fsencode(tmp_path / "new")
    proc = cli_bytes(b"ledger", b"new", target, b"--seed", b"bad \xff seed")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--seed 'bad \\udcff seed' is not valid UTF-8 text" in proc.stderr
    assert not (tmp_path / "new").exists()

    led = tmp_path / "run"
    Ledger.create(led, RunMeta(name="run", seed=SEED, config="C-cur")).close()
    src = tmp_path / "s.txt"
    src.write_text("Printing presses in Wittenberg.\n")
    before = file_bytes(led)
    proc = cli_bytes(b"sources", b"add", os.fsencode(led), os.fsencode(src), b"--title", b"t\xff")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "source_added: text holds '\\udcff', which is not valid UTF-8" in proc.stderr
    assert file_bytes(led) == before  # no event, and no stray source file


def test_a_long_error_line_keeps_where_and_what_to_do() -> None:
    """A message naming deep paths (an xdist worker's tmp_path is one) keeps its start and its
    advice at the end; only the middle gives way, and the line stays bounded."""
    from curiosity_tui.cli import _one_line

    deep = "/srv/" + "d" * 600 + "/run/journal.jsonl"
    msg = f"session 2 is committed to {deep}, but the projection {deep} could not be written"
    msg += "; the projection is rebuilt from the journal on the next write"
    line = _one_line(msg)
    assert len(line) == 1000 and line.count("…") == 1
    assert line.startswith("session 2 is committed to /srv/ddd")
    assert line.endswith("the projection is rebuilt from the journal on the next write")
    assert _one_line("short\nmessage\x07") == "short message\\x07"
