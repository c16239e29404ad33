"""Sources (S4): text artifacts stored under sources/ by sha256 with title and locator; bad files
refused with a clear error naming the file; a repeat stored once; retrieval hands passages with
their source ids."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from curiosity_tui.cli import main as cli
from curiosity_tui.contract.retrieval import retrieve, split_passages
from curiosity_tui.contract.sources import MAX_SOURCE_BYTES, add_source
from curiosity_tui.errors import InputError, TransitionError
from curiosity_tui.ledger import Ledger, RunMeta, verify

TEXT = (
    "Nuremberg's presses issued most Reformation pamphlets between 1518 and 1520.\n\n"
    "Wittenberg had few printers before 1519; Melchior Lotter moved a press there.\n\n"
    "Princely protection mattered: Frederick the Wise sheltered Luther after Worms.\n"
)


@pytest.fixture
def led(tmp_path: Path) -> Iterator[Ledger]:
    led = Ledger.create(
        tmp_path / "l", RunMeta(name="l", seed="Did print cause the Reformation?", config="C-cur")
    )
    yield led
    led.close()


def _file(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_source_is_stored_by_sha256_with_title_and_locator(tmp_path: Path, led: Ledger) -> None:
    f = _file(tmp_path, "printing_notes.txt", TEXT.encode())
    res = add_source(
        led, f, title="Printing notes", locator="https://example.org/notes", actor="human:ana"
    )
    digest = hashlib.sha256(TEXT.encode()).hexdigest()
    assert res.added and res.source_id == digest and res.title == "Printing notes"
    [src] = led.sources()
    assert (src.id, src.title, src.locator, src.size, src.added_by) == (
        digest,
        "Printing notes",
        "https://example.org/notes",
        len(TEXT.encode()),
        "human:ana",
    )
    assert src.path == f"sources/{digest}.txt"
    assert (led.path / src.path).read_bytes() == TEXT.encode()
    assert led.source_text(digest) == TEXT
    # default title: the file's stem; default locator: its absolute path
    f2 = _file(tmp_path, "other.txt", b"Another source text about printing.")
    add_source(led, f2)
    other = next(s for s in led.sources() if s.title == "other")
    assert other.locator == str(f2.resolve())
    assert verify(led.path).ok


def test_source_added_twice_is_stored_once(tmp_path: Path, led: Ledger) -> None:
    f = _file(tmp_path, "a.txt", TEXT.encode())
    g = _file(tmp_path, "b.txt", TEXT.encode())  # same content under another name
    first = add_source(led, f, title="First title")
    again = add_source(led, f)
    copy = add_source(led, g, title="Second title")
    assert first.added and not again.added and not copy.added
    assert first.source_id == again.source_id == copy.source_id
    assert copy.title == "First title"  # reported under the title it is stored with
    assert len(led.sources()) == 1
    assert [e.kind for e in led.events()].count("source_added") == 1
    assert sorted(p.name for p in (led.path / "sources").iterdir()) == [f"{first.source_id}.txt"]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.txt", b"", "file is empty"),
        ("blank.txt", b" \n\t\n", "only whitespace"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "looks binary"),
        ("latin1.txt", "Z\u00fcrich".encode("latin-1"), "not UTF-8"),
    ],
)
def test_unusable_file_is_refused_naming_it(
    tmp_path: Path, led: Ledger, name: str, data: bytes, message: str
) -> None:
    f = _file(tmp_path, name, data)
    with pytest.raises(InputError, match=message) as err:
        add_source(led, f)
    assert str(f) in str(err.value)
    assert led.sources() == [] and led.last_seq == 3  # nothing written


def test_file_over_20_mb_is_refused_without_reading_it(tmp_path: Path, led: Ledger) -> None:
    big = tmp_path / "huge.txt"
    with big.open("wb") as fh:  # sparse: no 20 MB written to disk
        fh.truncate(MAX_SOURCE_BYTES + 1)
    assert MAX_SOURCE_BYTES == 20 * 1024 * 1024
    with pytest.raises(InputError, match="over the 20 MB limit") as err:
        add_source(led, big)
    assert str(big) in str(err.value)
    assert led.sources() == []


def test_missing_file_and_directory_are_refused(tmp_path: Path, led: Ledger) -> None:
    with pytest.raises(InputError, match="no such file"):
        add_source(led, tmp_path / "nope.txt")
    with pytest.raises(InputError, match="not a regular file"):
        add_source(led, tmp_path)


def test_retrieval_ranks_passages_with_their_source_ids(tmp_path: Path, led: Ledger) -> None:
    sid = add_source(led, _file(tmp_path, "n.txt", TEXT.encode())).source_id
    sid2 = add_source(
        led, _file(tmp_path, "m.txt", b"Woodcuts reached illiterate audiences in taverns.")
    ).source_id
    out = retrieve(
        led,
        [
            ("r1", "share of pamphlets printed in Nuremberg"),
            ("r2", "woodcuts for illiterate audiences"),
            ("r3", "zzz qqq"),
        ],
        k=2,
    )
    assert out["r1"][0] == (sid, TEXT.split("\n\n")[0].strip())
    assert out["r2"][0] == (sid2, "Woodcuts reached illiterate audiences in taverns.")
    assert out["r3"] == []  # nothing scores above zero
    # long paragraphs are windowed (80 words, step 60), every word covered
    words = [f"w{i}" for i in range(200)]
    parts = split_passages(" ".join(words))
    assert [len(p.split()) for p in parts] == [80, 80, 80]
    assert {w for p in parts for w in p.split()} == set(words)


def test_cli_sources_add_and_list(
    tmp_path: Path, led: Ledger, capsys: pytest.CaptureFixture[str]
) -> None:
    path = led.path
    led.close()
    f = _file(tmp_path, "printing_notes.txt", TEXT.encode())
    assert (
        cli(["sources", "add", str(path), str(f), "--title", "Notes", "--locator", "lib:42"]) == 0
    )
    assert cli(["sources", "add", str(path), str(f)]) == 0
    out = capsys.readouterr().out.splitlines()
    digest = hashlib.sha256(TEXT.encode()).hexdigest()
    assert out[0].split()[:2] == [digest[:12], "added"] and out[0].endswith("Notes")
    assert out[1].split()[:3] == [digest[:12], "already", "stored"]
    assert cli(["sources", "list", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sources"]
    assert [(s["id"], s["title"], s["locator"]) for s in listed] == [(digest, "Notes", "lib:42")]
    empty = _file(tmp_path, "empty.txt", b"")
    assert cli(["sources", "add", str(path), str(empty)]) == 2
    err = capsys.readouterr().err
    assert str(empty) in err and "empty" in err


def test_invalid_actor_is_refused_before_anything_is_written(tmp_path: Path, led: Ledger) -> None:
    f = _file(tmp_path, "a.txt", TEXT.encode())
    with pytest.raises(InputError, match="invalid actor 'alice'"):
        add_source(led, f, actor="alice")
    assert list((led.path / "sources").iterdir()) == [] and led.sources() == []


def test_missing_or_altered_source_file_fails_retrieval_naming_it(
    tmp_path: Path, led: Ledger
) -> None:
    sid = add_source(led, _file(tmp_path, "n.txt", TEXT.encode())).source_id
    stored = led.path / "sources" / f"{sid}.txt"
    stored.write_text(TEXT.replace("Nuremberg", "Basel"), encoding="utf-8")
    with pytest.raises(TransitionError, match="no longer matches its sha256"):
        retrieve(led, [("r1", "pamphlets in Nuremberg")])
    stored.unlink()
    with pytest.raises(TransitionError, match=f"sources/{sid}.txt cannot be read"):
        retrieve(led, [("r1", "pamphlets in Nuremberg")])
