"""regen_mean / regen_dup_share: max cosine against the run's earlier sessions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from curiosity_tui.analysis.registry import default_registry, get
from curiosity_tui.analysis.rundata import RunData, RunSession, write_run_file
from curiosity_tui.analysis.similarity import (
    DEFAULT_EMBEDDER,
    ReferenceItem,
    ReferenceSet,
    dup_share_of,
    load_reference_set,
    measured_point,
    pooled_dup_share,
    question_maxima,
    reference_point,
    regen_mean_of,
)
from curiosity_tui.cli import main
from curiosity_tui.errors import InputError


class TableEmbedder:
    """Looks vectors up by text: hand-computable cosines."""

    name = "table-test"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        m = np.array([self.table[t] for t in texts], dtype=float)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    async def aembed(self, texts: Sequence[str], *, session: int = 0) -> np.ndarray:
        return self.embed(texts)


# a, b orthogonal; c = a (duplicate of a); d at 45° to a and b: cos = 0.7071
EMB = TableEmbedder({"a": [1, 0], "b": [0, 1], "c": [1, 0], "d": [1, 1], "e": [0, 1]})


def test_maxima_hand_computed() -> None:
    by = {1: ["a"], 2: ["b", "c"], 3: ["d"], 4: ["e"]}
    got = question_maxima(by, EMB)
    # session 1 has no comparison set; b vs {a} = 0; c vs {a} = 1; d vs {a,b,c} = .7071;
    # e vs {a,b,c,d} = 1 (b)
    assert [s for s, _ in got] == [2, 2, 3, 4]
    assert [round(m, 4) for _, m in got] == [0.0, 1.0, 0.7071, 1.0]
    assert regen_mean_of(got) == pytest.approx((0 + 1 + 0.70710678 + 1) / 4)
    # session shares: s2 1/2, s3 0/1, s4 1/1 → mean 0.5 (pooled would be 2/4 too here)
    assert dup_share_of(got) == pytest.approx(0.5)
    assert dup_share_of([(2, 0.80)]) == 1.0  # "reaches 0.80" is inclusive
    assert question_maxima({1: ["a", "b"]}, EMB) == []  # same-session questions don't count
    assert regen_mean_of([]) is None and dup_share_of([]) is None


def _run(rid: str, by: dict[int, list[str]]) -> RunData:
    return RunData(
        config="B",
        run_id=rid,
        sessions=[RunSession(session=s, questions=qs) for s, qs in by.items()],
    )


def test_registry_entries_use_the_offline_embedder_and_name_it() -> None:
    reg = default_registry()
    for name in ("regen_mean", "regen_dup_share"):
        m = reg.get(name)
        assert m.embedder == DEFAULT_EMBEDDER.name and m.higher_is_better is False
        assert DEFAULT_EMBEDDER.name in m.unit
    q = "Did the printing press cause the Reformation?"
    same = _run("r0", {1: [q], 2: [q]})
    assert get("regen_mean")(same) == pytest.approx(1.0)
    assert get("regen_dup_share")(same) == 1.0
    other = _run("r1", {1: [q], 2: ["Which zebra stripes confuse flies most?"]})
    assert (get("regen_mean")(other) or 0) < 0.5
    assert get("regen_dup_share")(other) == 0.0
    assert get("regen_mean")(_run("r2", {1: [q]})) is None


def test_pooled_variant_differs_from_per_run_then_mean() -> None:
    # run 1: one session of 1 duplicate of 1; run 2: one session, 0 of 3
    r1 = _run("r1", {1: ["a"], 2: ["c"]})
    r2 = _run("r2", {1: ["a"], 2: ["b", "e", "b"]})
    pooled = pooled_dup_share([r1, r2], EMB)
    assert (pooled.duplicates, pooled.questions) == (1, 4) and pooled.share == 0.25
    per_run = [dup_share_of(question_maxima(r.questions_by_session(), EMB)) for r in (r1, r2)]
    assert per_run == [1.0, 0.0]  # per run then mean: 0.5
    assert pooled.embedder == "table-test"


def test_reference_point_hand_computed_and_shared_against() -> None:
    ref = ReferenceSet(
        name="near floor",
        description="another topic",
        against=["b", "d"],
        items=[
            ReferenceItem(question="a", run="r0"),  # max(cos(a,b)=0, cos(a,d)=.7071)
            ReferenceItem(question="c", against=["a"], run="r1"),  # own set: 1.0
            ReferenceItem(question="e", run="r1"),  # cos(e,b) = 1
        ],
    )
    p = reference_point(ref, EMB)
    assert p.questions == 3 and p.runs == 2 and p.comparisons == 2 + 1 + 2
    assert p.mean == pytest.approx((0.70710678 + 1 + 1) / 3)
    assert p.sd == pytest.approx(float(np.std([0.70710678, 1, 1], ddof=1)))
    assert p.embedder == "table-test"


def test_measured_point_pools_questions() -> None:
    r1 = _run("r1", {1: ["a"], 2: ["c"]})  # 1.0
    r2 = _run("r2", {1: ["a"], 2: ["b", "d"]})  # 0, .7071
    p = measured_point([r1, r2], embedder=EMB)
    assert p.questions == 3 and p.runs == 2 and p.comparisons == 3
    assert p.mean == pytest.approx((1 + 0 + 0.70710678) / 3)


def test_reference_file_errors_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "items": [{"question": "q"}]}))
    with pytest.raises(InputError, match="items.0: no comparison set"):
        load_reference_set(bad)
    bad.write_text(json.dumps({"name": "x", "items": []}))
    with pytest.raises(InputError, match="bad.json: not a reference set: items"):
        load_reference_set(bad)
    q = "Did the printing press cause the Reformation?"
    ceiling = tmp_path / "ceiling.json"
    ceiling.write_text(
        json.dumps(
            {
                "name": "ceiling",
                "description": "questions vs their own paraphrases",
                "items": [
                    {"question": q, "against": ["Was the Reformation caused by printing?"]},
                    {"question": "Why did Luther write?", "against": ["What made Luther write?"]},
                ],
            }
        )
    )
    write_run_file(_run("r1", {1: [q], 2: [q, "Who printed pamphlets?"]}), tmp_path / "r1.run.json")
    assert main(["metrics", str(tmp_path / "r1.run.json"), "--reference", str(ceiling)]) == 0
    out = capsys.readouterr().out
    assert "| ceiling — questions vs their own paraphrases |" in out
    assert "| measured: B — questions vs the questions of the same run's earlier sessions" in out
    assert DEFAULT_EMBEDDER.name in out
    assert (
        main(["metrics", str(tmp_path / "r1.run.json"), "--reference", str(ceiling), "--json"]) == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in doc["reference"]] == ["ceiling", "measured: B"]
    assert doc["regen_dup_share_pooled"]["B"]["questions"] == 2
    assert doc["reference"][1]["questions"] == 2 and doc["reference"][1]["mean"] is not None
