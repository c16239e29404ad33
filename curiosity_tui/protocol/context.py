"""What a session carries while it runs: its settings, its budget, its record and the failure it
raises. Shared by the arms (``session.py``), the protocol's steps (``steps.py``) and the batch
helpers (``apply.py``)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from curiosity_tui.contract.rules import Contract, get_contract
from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import CallRecord, RunMeta, SessionRecord
from curiosity_tui.ledger.sampling_record import SamplingTable
from curiosity_tui.modelio.call_schemas import DIALECTS, CallSpec, Dialect
from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.modelio.sampling import draw_scope, table_of_options
from curiosity_tui.protocol.configs import Configuration, get_configuration
from curiosity_tui.protocol.tension_options import TensionOptions, tension_options
from curiosity_tui.protocol.text_repair import mend_short_texts

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
    deliverable_cap: int | None = None  # the final call's cap; None = what is left of the budget
    context_window: int | None = None  # tokens, when known (run metadata / --context-window)
    schema_dialect: Dialect = "strict"  # per-call schemas: "strict" (hosted subset) or "full"
    #: the run's sampling (issue 23.1): from its metadata, or ``run --sampling``; None = none set
    #: (nothing sent, as for calls outside a run)
    sampling: SamplingTable | None = None
    #: the run's tension setting (issue 26: measure, Δ per candidate, service sessions); from
    #: ``options["tension"]``, the pilot as run when unset
    tension: TensionOptions = field(default_factory=TensionOptions)

    @classmethod
    def from_meta(cls, meta: RunMeta, **overrides: Any) -> SessionSettings:
        """The run's settings; ``overrides`` (caps, context window, dialect; None = unset) win."""
        opts = meta.options or {}
        window = opts.get("context_window")
        base = cls(
            config=get_configuration(meta.config),
            contract=get_contract(meta.contract),
            epsilon=meta.epsilon,
            open_layer_min=1 if meta.open_layer == "compulsory" else 0,
            no_reselect=meta.no_reselect,
            use_curator_priority=meta.curator != "none",
            session_budget=meta.session_budget,
            curator_budget=meta.curator_budget,
            context_window=window if isinstance(window, int) and window > 0 else None,
            schema_dialect="full" if opts.get("schema_dialect") == "full" else "strict",
            sampling=table_of_options(opts),
            tension=tension_options(opts),
        )
        chosen = replace(base, **{k: v for k, v in overrides.items() if v is not None})
        if chosen.schema_dialect not in DIALECTS:
            raise ValueError(f"unknown schema dialect {chosen.schema_dialect!r}")
        return chosen

    def fit(self, cap: int, messages: Sequence[dict[str, str]]) -> int:
        """``cap``, lowered so the prompt and the reply fit the context window (when known)."""
        if self.context_window is None:
            return cap
        return max(0, min(cap, self.context_window - prompt_estimate(messages)))


CONTEXT_MARGIN = 64


def prompt_estimate(messages: Sequence[dict[str, str]]) -> int:
    """A generous estimate of a prompt's tokens (3 characters a token, template overhead,
    a margin): we have no tokenizer for the server's model, so it errs on the large side."""
    chars = sum(len(m.get("content", "")) for m in messages)
    return chars // 3 + 8 * len(messages) + CONTEXT_MARGIN


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
    #: who writes the session's deliverable events: "model", or "human:<name>" for a person
    #: taking the session (protocol/human_session.py; the same apply path)
    actor: str = "model"
    #: the record whose reply each call key's value came from (a mended reply: the one mended)
    answered_by: dict[str, CallRecord] = field(default_factory=dict)

    async def call(self, aw: Awaitable[tuple[T, CallRecord]], *, key: str | None = None) -> T:
        try:
            with draw_scope(key):  # the call's seed tells apart the draws of one kind
                value, rec = await aw
        except ModelCallError as err:
            for r in err.records:
                self._keep(r, key)
            raise
        for earlier in rec.earlier:
            self._keep(earlier, key)
        self._keep(rec, key)
        self.answered_by[key or rec.kind] = rec
        return value

    async def ask(
        self,
        spec: CallSpec,
        *,
        kind: str,
        messages: list[dict[str, str]],
        cap: int,
        internal: bool,
        key: str | None = None,
    ) -> Any:
        """A structured call with the call's own schema (in the run's dialect) and validator,
        its token cap fitted to the context window. Returns the stored record of the reply
        (``spec.record``: the wire shape translated once, here)."""
        st = self.settings
        call = self.call(
            self.client.structured(
                kind=kind,
                session=self.t,
                messages=messages,
                schema=spec.reply_model(st.schema_dialect),
                max_tokens=st.fit(cap, messages),
                internal=internal,
                validator=spec.check,
                wire_schema=spec.json_schema(st.schema_dialect),
                dialect=st.schema_dialect,
                shorter_schema=lambda: spec.shorter().json_schema(st.schema_dialect),
            ),
            key=key,
        )
        try:
            reply = await call
        except ModelCallError as err:  # only short texts wrong: asked again one by one
            mended = await mend_short_texts(
                self, spec, err, kind=kind, messages=messages, internal=internal, key=key
            )
            if mended is None:
                raise
            return mended
        return spec.record(reply)

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
