"""Raters on their own machines: ``pack export`` -> ``rate`` -> ``ratings import``, and every
refusal of the import with its one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input

from curiosity_tui.app import RatingApp
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.pack import default_key_path
from curiosity_tui.packs.rating import RatingSession, read_ratings
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.packs.unblind import PackLog, completeness

SIZE = (160, 50)


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    out = tmp_path / "pack"
    build_pack(hand_made_materials(), load_scheme("pilot-01"), out, seed=11)
    return out


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _rate(packdir: Path, rater: str, items: int | None = None) -> None:
    s = RatingSession(packdir, rater)
    for k, item in enumerate(s.order[:items]):
        s.save(
            item,
            {
                "q1": {"category": "built", "grounds": f"{rater} {k}"},
                "q2": {"category": ["none", "some", "many"][k % 3], "grounds": "g"},
            },
        )


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


async def _rate_all_by_keys(copy: Path, rater: str) -> None:
    """The exported copy rated through the app, as `curiosity-tui rate COPY` does."""
    app = RatingApp(copy, rater)
    async with app.run_test(size=SIZE) as pilot:
        scr = app.rating_screen
        for _ in range(scr.progress[2]):
            await pilot.press("f", *"by keys", "enter", "m", *"many", "enter")
            assert app.focused is app.screen.query_one("#quote-q2", Input)
            await pilot.press("enter", "ctrl+s")
            await pilot.pause()
        assert scr.progress[1] == scr.progress[2]


async def test_round_trip_for_two_raters(
    pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _rate(pack, "bob", items=2)  # bob started in the pack folder, then took it home
    _rate(pack, "cat")  # another rater whose file must never travel
    copies = {r: tmp_path / "away" / r for r in ("ann", "bob")}
    (tmp_path / "away").mkdir()
    for rater, copy in copies.items():
        rc, out, _ = _cli(capsys, "pack", "export", str(pack), "--rater", rater, "--out", str(copy))
        assert rc == 0 and "exported pack" in out and f"--rater {rater}" in out
    # the copies hold items, manifest, marker and the rater's own file only
    assert _files(copies["ann"]) == {"manifest.json", "items.jsonl", "export.json", "ratings"}
    assert _files(copies["bob"]) == {
        "manifest.json",
        "items.jsonl",
        "export.json",
        "ratings",
        "ratings/bob.jsonl",
    }
    for copy in copies.values():
        assert not (copy / "log.jsonl").exists() and not (copy / "ratings" / "cat.jsonl").exists()
        assert not list(copy.parent.glob("*.key.json")) and default_key_path(pack).exists()
    marker = json.loads((copies["ann"] / "export.json").read_text())
    assert marker["rater"] == "ann" and marker["format"] == "curiosity-tui-pack-export/1"

    await _rate_all_by_keys(copies["ann"], "ann")
    _rate(copies["bob"], "bob")  # bob resumes at item 3 and rates the rest
    bob_copy = read_ratings(copies["bob"] / "ratings" / "bob.jsonl")
    assert len(bob_copy) == 8  # 2 from the pack + 6 (the first two rated again: revisions)

    ann_file = copies["ann"] / "ratings" / "ann.jsonl"
    rc, out, err = _cli(capsys, "ratings", "import", str(pack), str(ann_file))
    assert rc == 0 and "imported 6 record(s) of rater ann" in out and "new file" in out, err
    bob_file = copies["bob"] / "ratings" / "bob.jsonl"
    rc, _, err = _cli(capsys, "ratings", "import", str(pack), str(bob_file))
    assert rc != 0 and "a second file for the same rater is refused" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert len(read_ratings(pack / "ratings" / "bob.jsonl")) == 2  # nothing stored lost
    rc, out, _ = _cli(capsys, "ratings", "import", str(pack), str(bob_file), "--replace")
    assert rc == 0 and "6 new; replaced the pack's file" in out

    ann = read_ratings(pack / "ratings" / "ann.jsonl")
    assert [r.answers["q1"].category for r in ann] == ["fresh"] * 6
    assert read_ratings(pack / "ratings" / "bob.jsonl") == bob_copy
    done = completeness(RatingSession(pack, "ann").pack)
    assert done.rated == {"ann": 6, "bob": 6, "cat": 6}
    kinds = [e.kind for e in PackLog(pack).entries()]
    # each import logs its intent before the rename, then its completion (decision 408)
    assert kinds[-4:] == ["ratings_import_begun", "ratings_imported"] * 2


def _exported(pack: Path, tmp_path: Path, rater: str) -> Path:
    copy = tmp_path / f"copy-{rater}"
    assert main(["pack", "export", str(pack), "--rater", rater, "--out", str(copy)]) == 0
    return copy


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    rc = main(list(argv))
    err = capsys.readouterr().err.strip()
    assert rc != 0 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_export_refuses_and_whole_pack_commands_refuse_a_copy(
    pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = _exported(pack, tmp_path, "ann")
    capsys.readouterr()
    err = _refused(capsys, "pack", "export", str(pack), "--rater", "bob", "--out", str(copy))
    assert "already exists" in err
    err = _refused(
        capsys, "pack", "export", str(pack), "--rater", "b/x", "--out", str(tmp_path / "z")
    )
    assert "invalid rater name" in err
    err = _refused(capsys, "pack", "export", str(pack), "--rater", "bob", "--out", str(pack / "x"))
    assert "inside the pack" in err
    deep = tmp_path / "new" / "folders" / "bob-copy"  # issue 28: its folder is created
    rc, _, err = _cli(capsys, "pack", "export", str(pack), "--rater", "bob", "--out", str(deep))
    assert rc == 0 and (deep / "export.json").is_file(), err
    (tmp_path / "afile").write_text("x")
    err = _refused(
        capsys,
        "pack",
        "export",
        str(pack),
        "--rater",
        "bob",
        "--out",
        str(tmp_path / "afile" / "c"),
    )
    assert "is a file, not a folder" in err
    for argv in (
        ["agreement", str(copy)],
        ["unblind", str(copy)],
        ["pack", "leakcheck", str(copy)],
        ["pack", "export", str(copy), "--rater", "ann", "--out", str(tmp_path / "again")],
        ["ratings", "import", str(copy), str(tmp_path / "none.jsonl")],
    ):
        assert "exported copy" in _refused(capsys, *argv), argv
    with pytest.raises(Exception, match="exported for rater 'ann', not 'bob'"):
        RatingSession(copy, "bob")
    assert not (copy / "ratings" / "bob.jsonl").exists()


def _write_records(path: Path, records: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_import_refusals_each_one_line(
    pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = _exported(pack, tmp_path, "ann")
    _rate(copy, "ann", items=2)
    good = [json.loads(x) for x in (copy / "ratings" / "ann.jsonl").read_text().splitlines()]
    capsys.readouterr()
    cases: list[tuple[str, list[dict[str, object]], str]] = [
        ("ann", [{**good[0], "rater": "bob"}, good[1]], "names rater 'bob'"),
        ("ann", [{**good[0], "pack_id": "pother"}], "is for pack 'pother'"),
        ("ann", [good[0], good[0]], "duplicate record"),
        ("ann", [{**good[0], "items_sha256": "0" * 64}], "rated on other items"),
        ("ann", [{k: v for k, v in good[0].items() if k != "items_sha256"}], "no items hash"),
        ("ann", [{**good[0], "item": "zz"}], "no such item"),
        ("ann", [{**good[0], "revision": 1}], "revision 1 where 0 comes next"),
        ("ann", [], "no rating records"),
    ]
    bad_q = json.loads(json.dumps(good[0]))
    bad_q["answers"]["q1"]["category"] = "nonsense"
    cases.append(("ann", [bad_q], "is not one of"))
    for n, (rater, records, why) in enumerate(cases):
        f = tmp_path / f"case{n}" / f"{rater}.jsonl"
        f.parent.mkdir()
        _write_records(f, records)
        assert why in _refused(capsys, "ratings", "import", str(pack), str(f)), why
    assert not (pack / "ratings" / "ann.jsonl").exists()
    # bob's file that is ann's work under another name
    stolen = tmp_path / "bob.jsonl"
    _write_records(stolen, [{**g, "rater": "bob"} for g in good])
    assert main(["ratings", "import", str(pack), str(copy / "ratings" / "ann.jsonl")]) == 0
    assert "one rater's ratings under two names" in _refused(
        capsys, "ratings", "import", str(pack), str(stolen)
    )
    assert not (pack / "ratings" / "bob.jsonl").exists()


def test_replace_only_takes_a_file_that_continues_the_packs_one(
    pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _rate(pack, "ann", items=1)
    copy = _exported(pack, tmp_path, "ann")
    _rate(pack, "ann", items=2)  # the rater went on in the pack folder too: the files fork
    _rate(copy, "ann", items=3)
    before = (pack / "ratings" / "ann.jsonl").read_bytes()
    capsys.readouterr()
    err = _refused(
        capsys, "ratings", "import", str(pack), str(copy / "ratings" / "ann.jsonl"), "--replace"
    )
    assert "does not continue the pack's one; nothing replaced" in err
    assert (pack / "ratings" / "ann.jsonl").read_bytes() == before
    same = pack / "ratings" / "ann.jsonl"
    rc, out, err = _cli(capsys, "ratings", "import", str(pack), str(same), "--replace")
    assert rc == 0 and out.startswith("nothing new:") and err == ""  # issue 28: not an error
    shorter = tmp_path / "ann.jsonl"
    shorter.write_bytes(b"".join(same.read_bytes().splitlines(keepends=True)[:1]))
    err = _refused(capsys, "ratings", "import", str(pack), str(shorter), "--replace")
    assert "adds nothing" in err
