"""``ratings import`` killed between moving the file into place and logging it can be
completed by running the same command again (issue 25, item 9): it logs the import it finds
done, instead of refusing the rater's "second file" for ever."""

from __future__ import annotations

from pathlib import Path

import pytest

import curiosity_tui.packs.ratings_import as imp
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme
from curiosity_tui.packs.unblind import PackLog


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


def test_an_import_killed_before_its_log_entry_completes_on_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "pack"
    build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), pack, seed=2)
    copy = tmp_path / "ann-copy"
    assert main(["pack", "export", str(pack), "--rater", "ann", "--out", str(copy)]) == 0
    s = RatingSession(copy, "ann")
    for item in s.order:
        s.save(item, {"q1": {"category": "built", "grounds": "g"},
                      "q2": {"category": "some", "grounds": "g"}})  # fmt: skip
    src = copy / "ratings" / "ann.jsonl"
    real_append = PackLog.append

    def killed(self: PackLog, kind: str, *a: object, **k: object) -> object:
        if kind == "ratings_imported":
            raise Killed
        return real_append(self, kind, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(imp.PackLog, "append", killed)
    with pytest.raises(Killed):
        imp.import_ratings(pack, src)
    monkeypatch.setattr(imp.PackLog, "append", real_append)
    assert (pack / "ratings" / "ann.jsonl").read_bytes() == src.read_bytes()
    assert not [e for e in PackLog(pack).entries() if e.kind == "ratings_imported"]
    capsys.readouterr()
    assert main(["ratings", "import", str(pack), str(src)]) == 0
    done = [e for e in PackLog(pack).entries() if e.kind == "ratings_imported"]
    assert len(done) == 1 and done[0].data["completed_interrupted"] is True
    assert main(["ratings", "import", str(pack), str(src)]) == 0  # again: nothing more to do
    assert len([e for e in PackLog(pack).entries() if e.kind == "ratings_imported"]) == 1
