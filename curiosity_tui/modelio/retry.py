"""When a failed model request is sent again, and after how long (the client's retry policy).

* Retried: HTTP 408, 409, 429, 500, 502, 503, 504 and connection errors. Never: 400, 401, 403,
  404, 422, 501 (nor any other status): sending the same request again cannot help.
* The wait: what the server's ``Retry-After`` (or ``retry-after-ms``) says, when it says;
  else ``backoff_s * 2**n`` capped at ``max_backoff_s``, with "equal jitter" (between half
  and all of it) so that concurrent runs do not retry in lockstep. A ``Retry-After`` longer
  than ``max_retry_after_s`` is not waited out: the call fails saying so.
* Timeouts: a server that serves one request at a time (a llama-server with one slot) keeps
  generating the abandoned reply after the client gives up, so a re-sent request only queues
  behind it. ``retry_timeouts="auto"`` re-sends a timed-out request unless the endpoint probe
  found one slot; ``"always"`` / ``"never"`` override.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

import openai

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})

_OVERFLOW = re.compile(
    r"exceed_context_size|exceeds? the (available )?context|context (length|window|size)"
    r"|maximum context|context_length_exceeded|too many tokens|prompt is too long"
    r"|exceed(s|ed)? (the )?context window",
    re.IGNORECASE,
)


def status_of(exc: Exception) -> int | None:
    return exc.status_code if isinstance(exc, openai.APIStatusError) else None


def error_message(exc: Exception) -> str:
    """The server's own error message (``error.message`` of the JSON body), else the text."""
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        if isinstance(body, dict):
            inner = body.get("error", body)
            if isinstance(inner, dict) and isinstance(inner.get("message"), str):
                return str(inner["message"])
            if isinstance(inner, str):
                return inner
        return str(exc.message)
    return str(exc)


def is_context_overflow(exc: Exception) -> bool:
    """A 400 saying the prompt (plus max_tokens) does not fit the context window."""
    if status_of(exc) != 400:
        return False
    assert isinstance(exc, openai.APIStatusError)
    body = exc.body
    kind = ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            kind = f"{inner.get('type', '')} {inner.get('code', '')}"
    return bool(_OVERFLOW.search(f"{kind} {error_message(exc)}"))


def retry_after_s(exc: Exception, *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``Retry-After`` as seconds or
    an HTTP date), or None."""
    response: Any = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass
class RetryPolicy:
    max_retries: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    retry_timeouts: Literal["auto", "always", "never"] = "auto"

    def resend_timeouts(self, slots: int | None) -> bool:
        if self.retry_timeouts == "auto":
            return slots != 1
        return self.retry_timeouts == "always"

    def why_not_retried(self, exc: Exception, retries: int, *, slots: int | None) -> str | None:
        """None if ``exc`` may be retried now; else why not (empty: nothing worth saying)."""
        if isinstance(exc, openai.APITimeoutError):
            if not self.resend_timeouts(slots):
                return (
                    "not re-sent: the server serves one request at a time and may still be "
                    "generating the abandoned reply (raise --timeout, or --retry-timeouts always)"
                )
        elif isinstance(exc, openai.APIStatusError):
            if exc.status_code not in RETRYABLE_STATUS:
                return ""
        elif not isinstance(exc, openai.APIConnectionError):
            return ""
        if retries >= self.max_retries:
            return ""
        return None

    def wait_s(self, exc: Exception, retries: int, rng: random.Random) -> float | None:
        """Seconds to wait before retry number ``retries + 1``; None: longer than allowed."""
        after = retry_after_s(exc)
        if after is not None:
            return after if after <= self.max_retry_after_s else None
        base = min(self.max_backoff_s, self.backoff_s * (2.0**retries))
        return base * (0.5 + 0.5 * rng.random())
