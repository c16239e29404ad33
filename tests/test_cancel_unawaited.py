"""A run cancelled while its first stage is being gathered leaves no coroutine "never awaited"
(the warning a person saw on quitting right after continuing a curated run; the pty test
tests/test_quit_warnings.py reaches it only by timing, this one every time)."""

from __future__ import annotations

import asyncio
import gc
import warnings
from types import SimpleNamespace
from typing import Any

import pytest

from curiosity_tui.protocol.steps import CheckPlan, Focus, candidates_step


class _SlowClient:
    async def complete(self, **_: Any) -> tuple[str, Any]:
        await asyncio.sleep(30)
        return "never", None


class _Ctx:
    t = 1
    settings = SimpleNamespace(candidate_cap=50, judge_cap=50, fit=lambda cap, _m: cap)
    client = _SlowClient()

    async def call(self, aw: Any, *, key: str | None = None) -> Any:
        return (await aw)[0]

    async def ask(self, *_: Any, **__: Any) -> Any:
        await asyncio.sleep(30)


async def test_a_cancel_before_the_gathered_calls_start_leaves_none_unawaited() -> None:
    focus = Focus("q1", {}, "Why did it spread?", ["a fact"], "rendering")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = asyncio.create_task(candidates_step(_Ctx(), focus, CheckPlan([], {})))  # type: ignore[arg-type]
        await asyncio.sleep(0)  # the step reaches its gather; the gathered calls have not run
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
