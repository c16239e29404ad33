"""A person's unfinished session, kept on disk so quitting (or a kill) loses nothing.

One file per (ledger, session, person): ``<ledger>/drafts/human-s<t>-<name>.json``, written
atomically (:func:`~curiosity_tui.atomic.atomic_write_bytes`) on every change, so a SIGKILL
leaves the last complete draft. The draft holds the form's fields as typed (strings); it is
not part of the journal and is removed once the session commits. A draft that cannot be read
is reported in one line and never overwritten silently: it is moved aside to ``*.bad``.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curiosity_tui.atomic import atomic_write_bytes

DRAFTS_DIR = "drafts"


class HumanDraft(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session: int
    person: str
    started: str = ""
    fields: dict[str, str] = Field(default_factory=dict)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def draft_path(ledger: Path, t: int, person: str) -> Path:
    return Path(ledger) / DRAFTS_DIR / f"human-s{t}-{_safe(person)}.json"


def save_draft(ledger: Path, draft: HumanDraft) -> Path:
    path = draft_path(ledger, draft.session, draft.person)
    data = json.dumps(draft.model_dump(), ensure_ascii=False, sort_keys=True, indent=1)
    atomic_write_bytes(path, (data + "\n").encode("utf-8"))
    return path


def load_draft(ledger: Path, t: int, person: str) -> tuple[HumanDraft | None, str]:
    """The kept draft (or None) and, if one was there but unreadable, a line saying so."""
    path = draft_path(ledger, t, person)
    if not path.exists():
        return None, ""
    try:
        draft = HumanDraft.model_validate_json(path.read_bytes())
    except (OSError, ValueError, ValidationError) as err:
        bad = path.with_suffix(".bad")
        path.replace(bad)
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        return None, f"{path}: unreadable draft moved to {bad.name} ({first})"
    if draft.session != t or draft.person != person:
        return None, f"{path}: draft is for session {draft.session} of {draft.person!r}; ignored"
    return draft, ""


def drop_draft(ledger: Path, t: int, person: str) -> None:
    draft_path(ledger, t, person).unlink(missing_ok=True)
