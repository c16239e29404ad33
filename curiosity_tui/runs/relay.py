"""The relay plan (issue 15): which mind takes each session of a ledger, as data.

A relay file (``run --relay relay.toml``) or a pilot plan's ``[relay]`` table::

    sessions = ["model:A", "human:ana", "model:B", "model:A"]   # session t takes item t

    [models.A]
    base_url = "http://127.0.0.1:8080/v1"
    model = "gemma"
    api_key_env = "OPENAI_API_KEY"   # the NAME of the variable holding the key (never the key)

    [models.B]
    base_url = "http://127.0.0.1:8081/v1"
    model = "gemma-b"

A run with more sessions than the list names is refused, unless ``cycle = true`` (the list
repeats). Only configurations with a store (B-armed, C) can be relayed: a session of A or B
sees nothing of the session before, so there is nothing to hand over.

Each session record a model takes names its :class:`~curiosity_tui.ledger.models.Mind`: kind,
model name and the endpoint's scheme, host and port (:func:`endpoint_host`: no key, no user
info, no path or query).
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from curiosity_tui.errors import InputError
from curiosity_tui.ledger.models import Mind

_ITEM_RE = re.compile(
    r"\A(model|human):([A-Za-z0-9][A-Za-z0-9._+-]{0,63})\Z"
)  # no trailing newline
_ENV_RE = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")


class RelayError(InputError):
    """A relay plan that cannot be used (the message names the file and key)."""


def endpoint_host(base_url: str | None) -> str | None:
    """``scheme://host[:port]`` of a base URL: what a record may name of an endpoint."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    if not parts.scheme or not parts.hostname:
        return None
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


class ModelMind(BaseModel):
    """One model of a relay: where it is served, its name, and where its key is."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    #: what the records name as the endpoint instead of the base URL's host (the offline demo's
    #: scripted servers, whose loopback ports change every run)
    endpoint_name: str | None = None

    @model_validator(mode="after")
    def _checked(self) -> ModelMind:
        if endpoint_host(self.base_url) is None:
            raise ValueError(f"base_url {self.base_url!r} is not an http(s) URL")
        if self.api_key_env is not None and not _ENV_RE.match(self.api_key_env):
            raise ValueError(
                f"api_key_env {self.api_key_env!r} must name an environment variable "
                "(the key itself never goes in a file)"
            )
        return self

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def endpoint(self) -> str | None:
        return self.endpoint_name or endpoint_host(self.base_url)


class RelayPlan(BaseModel):
    """Which mind takes each session: ``sessions[t - 1]`` is ``model:<key>`` or ``human:<name>``."""

    model_config = ConfigDict(extra="forbid")

    sessions: list[str] = Field(min_length=1)
    models: dict[str, ModelMind] = Field(default_factory=dict)
    cycle: bool = False

    @model_validator(mode="after")
    def _items(self) -> RelayPlan:
        for i, item in enumerate(self.sessions, start=1):
            m = _ITEM_RE.match(item)
            if m is None:
                raise ValueError(
                    f"sessions item {i} ({item!r}) must be model:<key> or human:<name> "
                    "(letters, digits, . _ + -)"
                )
            if m.group(1) == "model" and m.group(2) not in self.models:
                raise ValueError(
                    f"sessions item {i} names model {m.group(2)!r}: no [models.{m.group(2)}]"
                )
        used = {self.parse(i)[1] for i in self.sessions if i.startswith("model:")}
        unused = sorted(set(self.models) - used)
        if unused:
            raise ValueError(f"models.{unused[0]} is defined but no session takes it")
        return self

    @staticmethod
    def parse(item: str) -> tuple[Literal["model", "human"], str]:
        kind, _, name = item.partition(":")
        return ("model" if kind == "model" else "human"), name

    def item_for(self, t: int) -> tuple[Literal["model", "human"], str]:
        """``(kind, key)`` of session ``t`` (1-based)."""
        if t < 1:
            raise RelayError(f"session {t}: sessions count from 1")
        if t > len(self.sessions) and not self.cycle:
            raise RelayError(
                f"the relay names {len(self.sessions)} session(s), not session {t}; "
                "list more, or set cycle = true"
            )
        return self.parse(self.sessions[(t - 1) % len(self.sessions)])

    def mind_for(self, t: int) -> Mind:
        kind, key = self.item_for(t)
        if kind == "human":
            return Mind(kind="human", name=key)
        spec = self.models[key]
        return Mind(kind="model", name=spec.model, endpoint=spec.endpoint())

    def check_sessions(self, sessions: int) -> None:
        """Refuse (one line) a run of ``sessions`` the relay does not cover."""
        self.item_for(sessions)

    def humans(self, sessions: int) -> list[int]:
        """The sessions up to ``sessions`` a person takes."""
        return [t for t in range(1, sessions + 1) if self.item_for(t)[0] == "human"]

    def model_keys(self) -> list[str]:
        """The models, in the order they first take a session."""
        seen: list[str] = []
        for item in self.sessions:
            kind, key = self.parse(item)
            if kind == "model" and key not in seen:
                seen.append(key)
        return seen


def check_relayable(config_name: str) -> None:
    """Only configurations with a store can be relayed (decision 220)."""
    from curiosity_tui.protocol.configs import get_configuration

    cfg = get_configuration(config_name)
    if not cfg.store:
        raise RelayError(
            f"configuration {cfg.name} has no store, so a session hands nothing to the next "
            "mind: only B-armed and C configurations can be relayed"
        )


def relay_from_data(data: Any, source: str) -> RelayPlan:
    """Validate a relay table; :class:`RelayError` names the source and the key."""
    try:
        return RelayPlan.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        msg = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            msg = "unknown key (a typo? unknown keys are refused)"
        raise RelayError(f"{source}: {loc + ': ' if loc else ''}{msg}") from None


def load_relay(path: Path) -> RelayPlan:
    """Read a relay file (TOML; a pilot plan's ``[relay]`` table works the same way)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise RelayError(f"{path}: cannot read the relay plan: {err.strerror}") from None
    except UnicodeDecodeError:
        raise RelayError(f"{path}: not UTF-8 text; a relay plan is a TOML file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise RelayError(f"{path}: not valid TOML: {err}") from None
    if "relay" in data and isinstance(data["relay"], dict) and "sessions" not in data:
        data = data["relay"]  # a pilot plan: its [relay] table
    return relay_from_data(data, str(path))
