"""Rate limits of hosted APIs: one token bucket for requests and one for tokens per process.

``configure(rpm, tpm)`` (the CLI's ``--max-rpm`` / ``--max-tpm``) sets the process's limiter;
every model client built afterwards in the process waits on it before each HTTP request
(``event_hooks``: httpx's public request and response hooks, given to the httpx client the
openai client is built with, so retries wait too).
All runs of a pilot in one process share the buckets. Worker processes cannot share an
asyncio bucket, so each worker gets an equal share of the budget (``rpm / workers``): the
total never exceeds the limit, and a worker with fewer runs leaves part of its share unused.

A request costs one request and its token estimate (prompt characters ÷ 4 + ``max_tokens``);
when the response reports ``usage.total_tokens`` the difference is given back (or taken).
Buckets hold six seconds of budget, so a burst never exceeds a tenth of the minute's limit.
The server's ``x-ratelimit-remaining-requests`` / ``-tokens`` lower the buckets to what it
says is left, and a remaining count of 0 pauses every request until ``x-ratelimit-reset-*``
(``"1s"``, ``"6m0s"``, ``"20ms"``) has passed.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

__all__ = ["RateLimiter", "configure", "current", "event_hooks", "parse_reset"]

BURST_S = 6.0
_TOKENS_KEY = "curiosity_tokens"


class _Bucket:
    """``rate`` per minute, holding at most ``BURST_S`` seconds of it; may go into debt."""

    def __init__(self, per_minute: float, now: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * BURST_S)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + self.rate * (now - self.stamp))
        self.stamp = now

    def take(self, cost: float, now: float) -> float:
        """Reserve ``cost``; seconds to wait until the reservation is covered."""
        self.refill(now)
        self.level -= cost
        return 0.0 if self.level >= 0 else -self.level / self.rate


def parse_reset(text: str) -> float | None:
    """Seconds in an ``x-ratelimit-reset-*`` value: ``"1s"``, ``"6m0s"``, ``"20ms"``, ``"0.5"``."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


class RateLimiter:
    """Requests per minute and tokens per minute; ``None`` leaves that one unlimited."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        now = clock()
        self.rpm, self.tpm = rpm, tpm
        self.requests = _Bucket(rpm, now) if rpm else None
        self.tokens = _Bucket(tpm, now) if tpm else None
        self.paused_until = 0.0
        self.waited_s = 0.0
        self._clock, self._sleep = clock, sleep

    def share(self, parts: int) -> RateLimiter:
        """A limiter with ``1/parts`` of this one's budget (one per worker process)."""
        return RateLimiter(
            self.rpm / parts if self.rpm else None, self.tpm / parts if self.tpm else None
        )

    async def acquire(self, tokens: int) -> None:
        """Wait until one request of ``tokens`` estimated tokens is within the limits."""
        now = self._clock()
        wait = max(0.0, self.paused_until - now)
        if self.requests is not None:
            wait = max(wait, self.requests.take(1.0, now))
        if self.tokens is not None:
            wait = max(wait, self.tokens.take(float(tokens), now))
        if wait > 0:
            self.waited_s += wait
            await self._sleep(wait)

    def settle(self, estimated: int, used: int) -> None:
        """The response's real token count: give back (or take) the difference."""
        if self.tokens is not None:
            self.tokens.level = min(self.tokens.capacity, self.tokens.level + estimated - used)

    def observe(self, headers: Mapping[str, str]) -> None:
        """Follow the server's ``x-ratelimit-*`` headers when it sends them."""
        now = self._clock()
        for kind, bucket in (("requests", self.requests), ("tokens", self.tokens)):
            raw = headers.get(f"x-ratelimit-remaining-{kind}")
            try:
                remaining = float(raw) if raw is not None else None
            except ValueError:
                continue
            if remaining is None:
                continue
            if bucket is not None:
                bucket.refill(now)
                bucket.level = min(bucket.level, remaining)
            reset = parse_reset(headers.get(f"x-ratelimit-reset-{kind}", ""))
            if remaining <= 0 and reset is not None:
                self.paused_until = max(self.paused_until, now + reset)


_CURRENT: RateLimiter | None = None


def configure(limiter: RateLimiter | None) -> None:
    """Set (or clear, with ``None``) the process's limiter."""
    global _CURRENT
    _CURRENT = limiter


def current() -> RateLimiter | None:
    return _CURRENT


def _estimate(content: bytes) -> int:
    try:
        body = json.loads(content or b"{}")
    except ValueError:
        return 0
    if not isinstance(body, dict):
        return 0
    prompt = body.get("messages") or body.get("input") or ""
    limit = body.get("max_tokens") or body.get("max_completion_tokens") or 0
    return len(json.dumps(prompt, ensure_ascii=False)) // 4 + int(limit)


def event_hooks() -> dict[str, list[Callable[[Any], Awaitable[None]]]]:
    """The httpx ``event_hooks`` that make a client wait on the process's limiter (empty when
    none is configured); ``ModelClient`` builds its httpx client with them."""
    limiter = _CURRENT
    if limiter is None:
        return {}

    async def on_request(request: Any) -> None:
        est = _estimate(request.content) if limiter.tokens is not None else 0
        request.extensions[_TOKENS_KEY] = est
        await limiter.acquire(est)

    async def on_response(response: Any) -> None:
        limiter.observe(response.headers)
        if limiter.tokens is None or response.status_code != 200:
            return
        await response.aread()
        try:
            used = int(json.loads(response.content)["usage"]["total_tokens"])
        except (ValueError, KeyError, TypeError):
            return
        limiter.settle(int(response.request.extensions.get(_TOKENS_KEY, 0)), used)

    return {"request": [on_request], "response": [on_response]}
