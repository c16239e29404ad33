"""Pack files that cannot be swapped (issue 12, item 4): the manifest's scheme hash checked
on every open; a ratings file whose records name another rater, or that repeats or copies
records, refused with the file and line; rater names matched with \\A…\\Z."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.pack import MANIFEST_FILE, Pack, PackError
from curiosity_tui.packs.pack_agreement import pack_agreement
from curiosity_tui.packs.rating import (
    RaterNameError,
    RatingError,
    RatingSession,
    ratings_path,
    validate_rater_name,
)
from curiosity_tui.packs.schemes import load_scheme, scheme_sha256

ANSWERS = {"q1": {"category": "built", "grounds": "g"}, "q2": {"category": "some", "grounds": "g"}}


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), out, seed=3)
    return out


def _rate(pack: Path, rater: str, n: int = 3) -> Path:
    s = RatingSession(pack, rater)
    for item in s.order[:n]:
        s.save(item, ANSWERS)
    return ratings_path(pack, rater)


def _edit_manifest(pack: Path, fn) -> None:  # type: ignore[no-untyped-def]
    path = pack / MANIFEST_FILE
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc, indent=2))


def test_an_edited_instruction_is_refused_on_every_open(
    pack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Pack.open(pack)  # as built, it opens
    _edit_manifest(pack, lambda d: d["scheme"]["questions"][0].update(prompt="Say 'built'."))
    with pytest.raises(PackError, match="does not match its scheme_sha256"):
        Pack.open(pack)
    with pytest.raises(PackError, match="instructions were changed"):
        RatingSession(pack, "ann")
    assert main(["agreement", str(pack)]) == 2
    err = capsys.readouterr().err
    assert "manifest.json" in err and len(err.strip().splitlines()) == 1


def test_a_manifest_rewritten_with_a_fresh_hash_is_refused_by_the_build_log(pack: Path) -> None:
    def swap(d: dict) -> None:  # type: ignore[type-arg]
        d["scheme"]["questions"][0]["prompt"] = "Say 'built'."
        d["scheme_sha256"] = "0" * 64

    _edit_manifest(pack, swap)
    doc = json.loads((pack / MANIFEST_FILE).read_text())
    from curiosity_tui.packs.schemes import Scheme

    doc["scheme_sha256"] = scheme_sha256(Scheme.model_validate(doc["scheme"]))
    (pack / MANIFEST_FILE).write_text(json.dumps(doc))
    with pytest.raises(PackError, match=r"scheme_sha256 differs from the one logged .*log.jsonl:1"):
        Pack.open(pack)


def test_a_copy_of_one_raters_file_is_not_a_third_rater(pack: Path) -> None:
    r1 = _rate(pack, "r1")
    _rate(pack, "r2")
    assert pack_agreement(pack, n_boot=10).raters == ["r1", "r2"]
    shutil.copy(r1, pack / "ratings" / "r3.jsonl")
    with pytest.raises(RatingError, match=r"r3\.jsonl:1: the record names rater 'r1'"):
        pack_agreement(pack, n_boot=10)
    with pytest.raises(RatingError, match=r"r3\.jsonl:1: the record names rater 'r1'"):
        RatingSession(pack, "r3")


def test_a_copy_with_the_rater_renamed_is_caught_as_the_same_records(pack: Path) -> None:
    r1 = _rate(pack, "r1")
    text = r1.read_text().replace('"rater":"r1"', '"rater":"r3"')
    assert '"rater":"r3"' in text
    (pack / "ratings" / "r3.jsonl").write_text(text)
    with pytest.raises(RatingError, match=r"r3\.jsonl: record 1 .* same record as .*r1\.jsonl"):
        pack_agreement(pack, n_boot=10)


def test_duplicate_records_are_refused_with_the_line(pack: Path) -> None:
    r1 = _rate(pack, "r1", n=2)
    lines = r1.read_text().splitlines()
    r1.write_text("\n".join([*lines, lines[0]]) + "\n")
    with pytest.raises(RatingError, match=r"r1\.jsonl:3: duplicate record: .* already on line 1"):
        pack_agreement(pack, n_boot=10)
    with pytest.raises(RatingError, match=r"r1\.jsonl:3: duplicate record"):
        RatingSession(pack, "r1")


def test_a_record_for_another_pack_is_refused(pack: Path) -> None:
    r1 = _rate(pack, "r1", n=1)
    r1.write_text(r1.read_text().replace(Pack.open(pack).manifest.pack_id, "other-pack"))
    with pytest.raises(RatingError, match=r"r1\.jsonl:1: the record is for pack 'other-pack'"):
        pack_agreement(pack, n_boot=10)


def test_a_ratings_file_that_is_not_utf8_is_one_line(pack: Path) -> None:
    r1 = _rate(pack, "r1", n=2)
    r1.write_bytes(r1.read_bytes() + b'{"x": "\xff"}\n')
    with pytest.raises(RatingError, match=r"r1\.jsonl:3: not UTF-8"):
        RatingSession(pack, "r1")


@pytest.mark.parametrize("name", ["alice\n", "alice\r\n", "\nalice", "alice ", "a/b", "", ".."])
def test_rater_names_match_whole_strings(name: str) -> None:
    with pytest.raises(RaterNameError):
        validate_rater_name(name)
    assert validate_rater_name("alice") == "alice"


def test_a_trailing_newline_does_not_make_a_second_identity(pack: Path) -> None:
    _rate(pack, "alice", n=1)
    with pytest.raises(RaterNameError):
        RatingSession(pack, "alice\n")
    assert sorted(p.name for p in (pack / "ratings").glob("*.jsonl")) == ["alice.jsonl"]
