"""JSON parsing for the ledger's bulk reads (journal blocks, projection tables): pydantic's
parser (already a dependency) is about a third cheaper than ``json.loads`` on these files;
what it refuses and json accepts (a lone surrogate escape) is parsed by json, so the result
is always what ``json.loads`` gives, and what both refuse raises json's error (decision 215)."""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json


def loads(blob: bytes) -> Any:
    """``json.loads(blob)``, faster; raises json.JSONDecodeError or UnicodeDecodeError."""
    try:
        return from_json(blob, cache_strings="keys")
    except ValueError:
        return json.loads(blob)
