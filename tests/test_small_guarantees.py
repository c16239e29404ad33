"""Issue 25, item 9, the smaller holes: escape sequences in source titles, stored sources
altered or deleted, relay names with a trailing newline, a failed pack build that blocked
its retry, a pack (and its key) inside another pack's folder."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from pydantic import ValidationError

import curiosity_tui.packs.build as build_mod
from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.pack import PackError
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.runs.relay import RelayPlan

SEED = "Did the printing press cause the Reformation?"


def _ledger_with_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    path = tmp_path / "r1"
    Ledger.create(path, RunMeta(name="r1", seed=SEED, config="C-cur")).close()
    src = tmp_path / "note.txt"
    src.write_text("Wittenberg presses, 1517-1520.\n", encoding="utf-8")
    title = "\x1b]0;owned\x07\x1b[31mred title"
    assert main(["sources", "add", str(path), str(src), "--title", title]) == 0
    added = capsys.readouterr().out
    assert "\x1b" not in added and "\x07" not in added and "red title" in added
    return path, next((path / "sources").iterdir())


def test_source_titles_are_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _ledger_with_source(tmp_path, capsys)
    assert main(["sources", "list", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "␛[31mred title" in out


@pytest.mark.parametrize("damage", ["altered", "deleted"])
def test_verify_fails_on_an_altered_or_deleted_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path, stored = _ledger_with_source(tmp_path, capsys)
    assert main(["verify", str(path)]) == 0
    capsys.readouterr()
    if damage == "altered":
        stored.write_text("Wittenberg presses, 1517-1521.\n", encoding="utf-8")
    else:
        stored.unlink()
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert (
        stored.name in text and ("was altered" if damage == "altered" else "cannot be read") in text
    )


@pytest.mark.parametrize("item", ["human:ana\n", "model:a\n", "human:ana\r"])
def test_relay_names_with_a_trailing_newline_are_refused(item: str) -> None:
    models = {"a": {"base_url": "http://127.0.0.1:1/v1", "model": "m"}}
    with pytest.raises(ValidationError, match="must be model:<key> or human:<name>"):
        RelayPlan.model_validate({"sessions": [item, "model:a"], "models": models})


def test_a_failed_pack_build_leaves_nothing_that_blocks_the_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "pack"
    real = build_mod.atomic_write_bytes

    def full_disk(path: Path, data: bytes, **kw: object) -> None:
        if Path(path).name == "manifest.json":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(build_mod, "atomic_write_bytes", full_disk)
    with pytest.raises(OSError):
        build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), out, seed=1)
    assert not out.exists() and not (tmp_path / "pack.key.json").exists()
    monkeypatch.setattr(build_mod, "atomic_write_bytes", real)
    build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), out, seed=1)
    assert (out / "manifest.json").is_file()


def test_a_pack_inside_another_packs_folder_is_refused(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), outer, seed=1)
    with pytest.raises(PackError, match="would be inside the pack"):
        build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), outer / "inner")
    assert not (outer / "inner").exists() and not (outer / "inner.key.json").exists()
    with pytest.raises(PackError, match="its key .* would be inside the pack"):
        build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"),
                   tmp_path / "p2", key_out=outer / "ratings" / "p2.key.json")  # fmt: skip
