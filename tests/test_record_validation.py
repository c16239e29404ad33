"""Rating and adjudication records are validated field by field (issue 25, item 9): a
rating's ``ts`` must be an ISO-8601 UTC time, a misspelt field (``items_sha265``) is refused
rather than dropped, an adjudication's raw categories must be the scheme's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from adjudication_fixtures import build_rated_pack

from curiosity_tui.cli import main
from curiosity_tui.packs.adjudication import AdjudicationError, read_adjudications
from curiosity_tui.packs.disagreement import adjudicate, adjudication_state
from curiosity_tui.packs.pack import Pack


@pytest.fixture
def rated_pack(tmp_path: Path) -> Path:
    return build_rated_pack(tmp_path)


def _edit_first(path: Path, **changes: object) -> None:
    lines = path.read_text().splitlines()
    rec = json.loads(lines[0])
    for k, v in changes.items():
        if v is None:
            rec.pop(k, None)
        else:
            rec[k] = v
    lines[0] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"ts": "yesterday"}, "is not an ISO-8601 UTC time"),
        ({"ts": "2026-13-40T99:00:00.000Z"}, "is not an ISO-8601 UTC time"),
        ({"items_sha265": "0" * 64}, "items_sha265"),
    ],
)
def test_bad_rating_fields_are_refused(
    rated_pack: Path,
    capsys: pytest.CaptureFixture[str],
    changes: dict[str, object],
    named: str,
) -> None:
    _edit_first(rated_pack / "ratings" / "ann.jsonl", **changes)
    assert main(["agreement", str(rated_pack), "--boot", "20"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ann.jsonl" in err and named in err, err


def test_adjudication_raw_categories_are_the_schemes(rated_pack: Path) -> None:
    state = adjudication_state(rated_pack)
    d = state.disagreements[0]
    adjudicate(rated_pack, d.item, d.question, d.raters[0].category, "grounds", by="coord")
    path = rated_pack / "adjudication.jsonl"
    rec = json.loads(path.read_text())
    rec["raw"] = {r: "made-up" for r in rec["raw"]}
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(AdjudicationError, match="raw category 'made-up'"):
        read_adjudications(Pack.open(rated_pack))
