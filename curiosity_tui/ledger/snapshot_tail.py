"""A snapshot row's index fields read from the end of its line (decision 277).

A snapshot row is canonical JSON with sorted keys (``replay.snapshot_line``), so after the
``changed`` map, which holds the nodes and is nearly all of the row, come exactly
``"node_count"``, ``"seq"``, ``"session"``, ``"stage"`` and ``"state_hash"``. Listing the
snapshots (the browser's session slider) needs only those: reading them from the line's tail
skips parsing every node the snapshots hold. The last ``,"node_count":`` of a line is the
top-level one (nothing follows it but the scalars); anything unexpected gives None and the
caller parses the rows whole, as before.
"""

from __future__ import annotations

import json

__all__ = ["parse_snapshot_tail"]

_HEAD = b'{"changed":{'
_MARK = b',"node_count":'
_TYPES = {"node_count": int, "seq": int, "session": int, "stage": str, "state_hash": str}


def parse_snapshot_tail(line: bytes) -> tuple[int, str, int] | None:
    """(session, stage, seq) of one stored snapshot row, or None if it is not shaped so."""
    at = line.rfind(_MARK)
    if not line.startswith(_HEAD) or at < 0:
        return None
    try:
        tail = json.loads(b"{" + line[at + 1 :])
    except (ValueError, UnicodeDecodeError):
        return None
    if type(tail) is not dict or tail.keys() != _TYPES.keys():
        return None
    if any(type(tail[k]) is not t for k, t in _TYPES.items()):
        return None
    return tail["session"], tail["stage"], tail["seq"]
