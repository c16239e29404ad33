"""The ``openai`` clients the model client sends through: one per event loop and endpoint.

One ``openai.AsyncOpenAI`` per (event loop, endpoint, key, timeout), shared by every
``ModelClient`` and released with its loop. httpx connections cannot cross loops; and an
``AsyncOpenAI`` dropped unclosed inside a *running* loop lets asyncio close its sockets behind
the selector's back, after which new connections of that loop can hang until they time out
(observed with 200 concurrent calls after a discarded client). Holding the clients here for
the loop's lifetime means dropping a ``ModelClient`` is always safe. The key enters the pool
key only as a sha256 digest.

Each is built with public API only (decision 340): ``openai.DefaultAsyncHttpxClient`` (the
httpx client openai would build itself: its connection limits, timeout and redirects) with
the rate limiter's httpx ``event_hooks``, passed as ``http_client``.
"""

from __future__ import annotations

import asyncio
import hashlib
import weakref
from collections.abc import Iterable
from typing import Any

import openai

from curiosity_tui.modelio import ratelimit

__all__ = ["close_clients", "openai_client", "pool_key"]

PoolKey = tuple[Any, ...]

_POOL: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[PoolKey, openai.AsyncOpenAI]] = (
    weakref.WeakKeyDictionary()
)


def pool_key(base_url: str | None, api_key: str, timeout_s: float) -> PoolKey:
    """What makes two model clients share an ``openai`` client (the key only as a digest)."""
    return (base_url, hashlib.sha256(api_key.encode("utf-8")).hexdigest(), timeout_s)


def openai_client(
    key: PoolKey, *, api_key: str, base_url: str | None, timeout_s: float
) -> openai.AsyncOpenAI:
    """The running loop's ``openai`` client for ``key``, built on first use."""
    per_loop = _POOL.setdefault(asyncio.get_running_loop(), {})
    oa = per_loop.get(key)
    if oa is None:
        # --max-rpm / --max-tpm wait in httpx's request hook, so retries wait too (14.6)
        http = openai.DefaultAsyncHttpxClient(
            timeout=timeout_s, event_hooks=ratelimit.event_hooks()
        )
        oa = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,  # ModelClient retries under its own policy
            timeout=timeout_s,
            http_client=http,
        )
        per_loop[key] = oa
    return oa


async def close_clients(keys: Iterable[PoolKey]) -> None:
    """Close the running loop's clients for ``keys`` (a later call builds new ones)."""
    per_loop = _POOL.get(asyncio.get_running_loop(), {})
    for key in keys:
        oa = per_loop.pop(key, None)
        if oa is not None:
            await oa.close()
