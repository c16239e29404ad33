"""UTC timestamps, one function per stored precision. The bottom floor: imports nothing from
the package. Each format is what existing files on disk already hold, so it must not change:

- :func:`utc_now_micro` ``2025-01-02T03:04:05.123456Z``: ledger events and session records
  (``protocol/session.py`` parses ``started``/``finished`` back with ``%f``).
- :func:`utc_now_milli` ``2025-01-02T03:04:05.123Z``: rating files, the pack log, pack manifests.
- :func:`utc_now_seconds` ``2025-01-02T03:04:05Z``: pre-registration lock entries, the ledger
  writer lock's ``since``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime


def utc_now_micro() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_now_milli() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now_seconds() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
