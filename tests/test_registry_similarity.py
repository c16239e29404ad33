"""regen_mean / regen_dup_share: max cosine against the run's earlier sessions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from curiosity_tui.analysis.registry import default_registry, get
from curiosity_tui.analysis.rundata import RunData, RunSession
from curiosity_tui.analysis.similarity import (
    DEFAULT_EMBEDDER,
    dup_share_of,
    pooled_dup_share,
    question_maxima,
    regen_mean_of,
)


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
