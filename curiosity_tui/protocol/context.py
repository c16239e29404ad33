"""What a session carries while it runs: its settings, its budget, its record and the failure it
raises. Shared by the arms (``session.py``), the protocol's steps (``steps.py``) and the batch
helpers (``apply.py``)."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from curiosity_tui.contract.rules import Contract, get_contract
from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import CallRecord, RunMeta, SessionRecord
from curiosity_tui.protocol.client import ModelCallError, ModelClient
from curiosity_tui.protocol.configs import Configuration, get_configuration

T = TypeVar("T")


class SessionFailure(CuriosityError):
    """A session could not complete; nothing of it was applied."""

    def __init__(self, session: int, reason: str, record: SessionRecord) -> None:
        super().__init__(f"session {session} failed: {reason}")
        self.session = session
        self.reason = reason
        self.record = record


@dataclass
class SessionSettings:
    config: Configuration
    contract: Contract
    epsilon: float = 0.15
    open_layer_min: int = 1  # 1 = compulsory (pilot-01), 0 = optional
    no_reselect: bool = False
    use_curator_priority: bool = True
    session_budget: int = 4000
    curator_budget: int = 4000
    candidate_cap: int = 260
    judge_cap: int = 500
    checker_cap: int = 350
    deliverable_min: int = 800  # never start the final call with less than this left
    retrieval_k: int = 3

    @classmethod
    def from_meta(cls, meta: RunMeta) -> SessionSettings:
        return cls(
            config=get_configuration(meta.config),
            contract=get_contract(meta.contract),
            epsilon=meta.epsilon,
            open_layer_min=1 if meta.open_layer == "compulsory" else 0,
            no_reselect=meta.no_reselect,
            use_curator_priority=meta.curator != "none",
            session_budget=meta.session_budget,
            curator_budget=meta.curator_budget,
        )


@dataclass
class Budget:
    limit: int
    used: int = 0

    def take(self, record: CallRecord) -> None:
        self.used += record.completion_tokens

    @property
    def left(self) -> int:
        return self.limit - self.used


@dataclass
class SessionContext:
    """One running session: every model call goes through :meth:`call`, which keeps its
    record (inputs, raw outputs, tokens against the budget), also when the call fails."""

    led: Ledger
    client: ModelClient
    t: int
    settings: SessionSettings
    record: SessionRecord
    budget: Budget
    rejected: list[str] = field(default_factory=list)

    async def call(self, aw: Awaitable[tuple[T, CallRecord]], *, key: str | None = None) -> T:
        try:
            value, rec = await aw
        except ModelCallError as err:
            for r in err.records:
                self._keep(r, key)
            raise
        for earlier in rec.earlier:
            self._keep(earlier, key)
        self._keep(rec, key)
        return value

    def _keep(self, rec: CallRecord, key: str | None) -> None:
        self.record.calls.append(rec)
        self.budget.take(rec)
        name = key or rec.kind
        self.record.inputs.setdefault(name, rec.request_text)
        self.record.outputs[name] = rec.response_text


def norm_id(value: str | None) -> str | None:
    """A node id as the model may write it (' Q3 ') in the ledger's form ('q3'); None if empty."""
    if value is None:
        return None
    v = value.strip().lower()
    return v or None
