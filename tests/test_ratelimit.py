"""``--max-rpm`` / ``--max-tpm`` (issue 14.6): token buckets on a fake clock, the server's
rate-limit headers through the scripted server, a per-worker share. No test sleeps or times:
the limiter's clock and sleep are injected and the waits it asks for are checked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.modelio import ratelimit
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.modelio.ratelimit import RateLimiter, parse_reset
from curiosity_tui.offline.scripted_server import Script, ScriptedServer
from curiosity_tui.runs.workers import ClientSpec, worker_share


class FakeTime:
    """A clock that only moves when the limiter sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))


def _limiter(t: FakeTime, rpm: float | None = None, tpm: float | None = None) -> RateLimiter:
    return RateLimiter(rpm, tpm, clock=t.clock, sleep=t.sleep)


@pytest.fixture(autouse=True)
def _no_process_limiter() -> Iterator[None]:
    yield
    ratelimit.configure(None)


def test_requests_bucket_bursts_six_seconds_then_paces() -> None:
    t = FakeTime()
    lim = _limiter(t, rpm=60)  # one a second, six seconds of burst

    async def go() -> None:
        for _ in range(9):
            await lim.acquire(0)

    asyncio.run(go())
    assert t.sleeps == [1.0, 2.0, 3.0]  # reservations queue up behind each other
    t.now = 10.0  # ten seconds later the debt of three is paid and six more are back
    t.sleeps.clear()
    asyncio.run(lim.acquire(0))
    assert t.sleeps == []


def test_tokens_bucket_takes_the_estimate_and_settles_on_usage() -> None:
    t = FakeTime()
    lim = _limiter(t, tpm=6000)  # 100 tokens a second, 600 of burst
    asyncio.run(lim.acquire(500))
    assert lim.tokens is not None and lim.tokens.level == 100
    lim.settle(500, 200)  # the call used less than estimated
    assert lim.tokens.level == 400
    asyncio.run(lim.acquire(700))
    assert t.sleeps == [3.0]  # 300 tokens short at 100 a second


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("0.5", 0.5), ("1h2m3.5s", 3723.5)],
)
def test_reset_header_values(text: str, seconds: float) -> None:
    assert parse_reset(text) == pytest.approx(seconds)


def test_unreadable_reset_is_ignored() -> None:
    assert parse_reset("soon") is None and parse_reset("") is None


def test_headers_lower_the_bucket_and_zero_pauses_until_reset() -> None:
    t = FakeTime()
    lim = _limiter(t, rpm=600)
    lim.observe({"x-ratelimit-remaining-requests": "2", "x-ratelimit-reset-requests": "1s"})
    assert lim.requests is not None and lim.requests.level == 2
    lim.observe({"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "2.5s"})
    asyncio.run(lim.acquire(0))
    assert t.sleeps == [2.5]


def _server_with_headers(headers: dict[str, str]) -> ScriptedServer:
    srv = ScriptedServer(Script(defaults={"answer": "fine"}))
    srv.response_headers = lambda: dict(headers)
    return srv


async def _answers(base_url: str, n: int) -> list[int]:
    client = ModelClient(base_url=base_url, api_key="sk-test", model="m", retry_backoff_s=0.01)
    used = []
    try:
        for _ in range(n):
            _, rec = await client.complete(
                kind="answer",
                session=1,
                messages=[{"role": "user", "content": "x" * 400}],
                max_tokens=50,
                internal=False,
            )
            used.append(rec.prompt_tokens + rec.completion_tokens)
    finally:
        await client.aclose()
    return used


def test_the_client_waits_on_the_server_headers_through_the_scripted_server() -> None:
    t = FakeTime()
    lim = _limiter(t, rpm=6000)
    ratelimit.configure(lim)
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"}
    with _server_with_headers(headers) as srv:
        asyncio.run(_answers(srv.base_url, 3))
        assert len(srv.requests) == 3
    assert t.sleeps == [1.5, 1.5]  # every reply said "none left for 1.5 s"


def test_the_client_settles_tokens_on_the_reported_usage() -> None:
    t = FakeTime()
    lim = _limiter(t, tpm=60_000)
    ratelimit.configure(lim)
    with _server_with_headers({}) as srv:
        (used,) = asyncio.run(_answers(srv.base_url, 1))
    assert used > 0
    assert lim.tokens is not None and lim.tokens.level == lim.tokens.capacity - used


def test_requests_pace_over_the_scripted_server() -> None:
    t = FakeTime()
    ratelimit.configure(_limiter(t, rpm=10))  # one per six seconds, a burst of one
    with _server_with_headers({}) as srv:
        asyncio.run(_answers(srv.base_url, 3))
    assert t.sleeps == [6.0, 12.0]


def test_no_limiter_leaves_the_client_alone() -> None:
    ratelimit.configure(None)
    with _server_with_headers({"x-ratelimit-remaining-requests": "0"}) as srv:
        assert len(asyncio.run(_answers(srv.base_url, 2))) == 2


def test_workers_share_the_budget() -> None:
    ratelimit.configure(RateLimiter(120, 9000))
    client = ModelClient(base_url="http://127.0.0.1:9", api_key="k", model="m")
    cs = ClientSpec.of(client)
    assert (cs.max_rpm, cs.max_tpm) == (120, 9000)
    share = worker_share(cs, 3)
    assert (share.max_rpm, share.max_tpm) == (40, 3000)
    share.build()
    got = ratelimit.current()
    assert got is not None and (got.rpm, got.tpm) == (40, 3000)
    assert worker_share(ClientSpec(model="m"), 2).max_rpm is None


@pytest.mark.parametrize("flag", ["--max-rpm", "--max-tpm"])
def test_cli_refuses_a_non_positive_limit(
    tmp_path: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--out", str(tmp_path)]) == 0  # a ledger to run on
    capsys.readouterr()
    (ledger,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    code = main(["run", str(ledger), "--sessions", "6", "--scripted", flag, "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and f"{flag} 0" in err[0]
