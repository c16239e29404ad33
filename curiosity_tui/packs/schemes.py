"""Rating schemes: questions, categories (one key each), grounds, quotes, controls.

A scheme is a JSON file. Three ship with the package (``pilot-01``, ``pilot-02`` and
``support-audit``, the (requirement, passage) pairs of decision 520, in
``curiosity_tui/packs/schemes/``); any other file can be named by path. A pack embeds a
copy of its scheme in its manifest, so ratings never depend on the installed version.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from curiosity_tui.errors import InputError

__all__ = [
    "BUILTIN_SCHEMES",
    "Category",
    "ControlSpec",
    "Question",
    "Scheme",
    "load_scheme",
    "scheme_sha256",
]

BUILTIN_SCHEMES = ("pilot-01", "pilot-02", "support-audit")

_KEY_RE = re.compile(r"\A[a-z0-9]\Z")  # \Z: "a\n" is not a key

ControlKind = Literal["repetition", "unsupported-detail", "resolution"]


class Category(BaseModel):
    id: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    key: str = Field(description="the single key that picks this category in the rating app")
    label: str
    help: str = ""


class Question(BaseModel):
    id: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    prompt: str
    help: str = ""
    categories: list[Category] = Field(min_length=2)
    grounds_required: bool = True
    max_quotes: int = Field(0, ge=0, le=10)
    min_quotes: int = Field(0, ge=0, le=10)
    quote_help: str = ""
    quote_min_chars: int = Field(
        12,
        ge=1,
        le=500,
        description="a quote shorter than this (after whitespace folding) is refused",
    )
    quote_min_words: int = Field(
        2, ge=1, le=50, description="a quote needs at least this many words"
    )
    level: Literal["nominal", "ordinal"] = Field(
        "nominal",
        description="the question's scale; ordinal: the categories are listed lowest first, "
        "and agreement adds the weighted coefficients (decision 425)",
    )

    @model_validator(mode="after")
    def _check(self) -> Question:
        if self.min_quotes > self.max_quotes:
            raise ValueError(f"question {self.id}: min_quotes exceeds max_quotes")
        ids = [c.id for c in self.categories]
        if len(set(ids)) != len(ids):
            raise ValueError(f"question {self.id}: category ids repeat")
        return self

    def category(self, cat_id: str) -> Category:
        for c in self.categories:
            if c.id == cat_id:
                return c
        raise KeyError(cat_id)

    @property
    def category_ids(self) -> list[str]:
        return [c.id for c in self.categories]


class ControlSpec(BaseModel):
    """A kind of control item built into the pack and flagged only in the key."""

    kind: ControlKind
    description: str
    expected: dict[str, str] = Field(description="question id → the category a rater should pick")


class Scheme(BaseModel):
    id: str
    version: int = 1
    title: str
    instructions: str
    sections: list[str] = Field(min_length=3, max_length=3)
    questions: list[Question] = Field(min_length=1)
    controls: list[ControlSpec] = []

    @model_validator(mode="after")
    def _check(self) -> Scheme:
        qids = [q.id for q in self.questions]
        if len(set(qids)) != len(qids):
            raise ValueError("question ids repeat")
        keys: dict[str, str] = {}
        for q in self.questions:
            for c in q.categories:
                if not _KEY_RE.match(c.key):
                    raise ValueError(
                        f"question {q.id}, category {c.id}: key {c.key!r} must be one "
                        "lower-case letter or digit"
                    )
                if c.key in keys:
                    raise ValueError(
                        f"key {c.key!r} is used by both {keys[c.key]} and {q.id}/{c.id}; "
                        "keys must be unique across the scheme"
                    )
                keys[c.key] = f"{q.id}/{c.id}"
        for ctl in self.controls:
            for qid, cat in ctl.expected.items():
                if qid not in qids:
                    raise ValueError(f"control {ctl.kind}: unknown question {qid}")
                if cat not in self.question(qid).category_ids:
                    raise ValueError(f"control {ctl.kind}: {cat!r} is not a category of {qid}")
        return self

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(qid)

    def key_map(self) -> dict[str, tuple[str, str]]:
        """key → (question id, category id)."""
        return {c.key: (q.id, c.id) for q in self.questions for c in q.categories}


def scheme_sha256(scheme: Scheme) -> str:
    canonical = json.dumps(scheme.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_scheme(name_or_path: str | Path) -> Scheme:
    """Load a shipped scheme by name (``pilot-01``, ``pilot-02``) or a JSON file by path."""
    text: str
    where: str
    name = str(name_or_path)
    if name in BUILTIN_SCHEMES:
        ref = resources.files("curiosity_tui.packs").joinpath("schemes", f"{name}.json")
        text = ref.read_text(encoding="utf-8")
        where = f"shipped scheme {name}"
    else:
        path = Path(name_or_path)
        if not path.is_file():
            raise InputError(
                f"scheme {name!r} is neither a shipped scheme ({', '.join(BUILTIN_SCHEMES)}) "
                "nor a readable file"
            )
        text = path.read_text(encoding="utf-8")
        where = str(path)
    try:
        return Scheme.model_validate_json(text)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InputError(
            f"{where}: invalid scheme at {loc or 'top level'}: {first['msg']}"
        ) from err
