"""What the endpoint probe found, as the ledger stores it (``endpoint_probed`` events).

The probe itself is :mod:`curiosity_tui.modelio.endpoint`; this module only holds the record,
so that the ledger can validate and fold it without importing the protocol layer.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ResponseFormat = Literal["json_schema", "json_object", "prompt"]
FormatChoice = Literal["auto", "json_schema", "json_object", "prompt"]
TrialOutcome = Literal["honoured", "unconstrained", "refused", "overflow", "error", "not_tried"]
EmbeddingsState = Literal["served", "missing", "error", "not_asked"]


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FormatTrial(_Rec):
    """One probe request with one response format.

    ``honoured``: the reply met the probe schema (``json_schema``: an enum value the model
    cannot guess without the schema being enforced; ``json_object`` / ``prompt``: one JSON
    object). ``unconstrained``: HTTP 200 but the reply did not. ``refused``: an HTTP error
    that names the format (400/422/500/501). ``overflow``: a context-overflow 400.
    """

    format: ResponseFormat
    outcome: TrialOutcome
    detail: str = ""
    latency_s: float = 0.0


class ModelFile(_Rec):
    """A model file named by ``--model-file`` (or a plan's ``model_file``): what it hashed to."""

    path: str
    bytes: int
    sha256: str


class ServerChange(_Rec):
    """What the server said about itself changed between two sessions of one run (issue 23.2):
    recorded when a new probe's identity (:meth:`EndpointCapabilities.identity`) differs from
    the run's previous one. ``changes``: field -> [before, after]."""

    after_session: int = Field(description="The last session run under the earlier server.")
    changes: dict[str, list[Any]]

    def summary(self) -> str:
        """``the server changed between s2 and s3: server_props.build_info, model_file``."""
        return (
            f"the server changed between s{self.after_session} and s{self.after_session + 1}: "
            + ", ".join(sorted(self.changes))
        )


IDENTITY_FIELDS = ("base_url", "model", "server", "server_props", "listed_model", "model_file")
"""What the server says it is (and the model file's hash): compared between sessions of a run."""


class EndpointCapabilities(_Rec):
    """An endpoint's capabilities as probed before a run's first session (and on resume)."""

    base_url: str | None = None
    model: str
    probed_at: str = ""
    server: str = Field(default="", description="'llama.cpp' when GET /props answers, else ''.")
    requested_format: FormatChoice = "auto"
    response_format: ResponseFormat | None = Field(
        default=None, description="What structured calls use; null: nothing the run can use."
    )
    trials: list[FormatTrial] = Field(default_factory=list)
    context_window: int | None = None
    context_source: Literal["props", "models", "flag", "unknown"] = "unknown"
    slots: int | None = Field(
        default=None, description="Requests served at once (llama.cpp total_slots)."
    )
    model_listed: bool | None = Field(
        default=None, description="Whether GET /v1/models lists the model (null: no list)."
    )
    schema_dialect: Literal["strict", "full"] | None = Field(
        default=None,
        description="The per-call schema dialect the server accepts: 'full' (item counts, "
        "lengths; llama.cpp's grammars) or 'strict' (the hosted subset). A run uses it unless "
        "--schema-dialect says otherwise; each call records the one it sent.",
    )
    json_object_schema: bool = Field(
        default=False,
        description="json_object requests carry the call's schema as response_format.schema "
        "(llama.cpp and llama-cpp-python turn it into a grammar); probed, never assumed.",
    )
    embedding_model: str | None = None
    embedding_base_url: str | None = Field(
        default=None, description="Where embeddings were probed, when not at base_url."
    )
    embeddings: EmbeddingsState = "not_asked"
    embeddings_detail: str = ""
    embedding_fallback: Literal["none", "offline"] = "none"
    embedder: str | None = Field(
        default=None, description="The embedder similarity figures use under this probe."
    )
    sampling_defaults: dict[str, Any] | None = Field(
        default=None,
        description="What the server says its sampling defaults are (llama.cpp /props "
        "default_generation_settings: temperature, top_p, top_k, min_p, seed …), what a "
        "'server-default' value means; null: the server does not say (unknown).",
    )
    server_props: dict[str, Any] | None = Field(
        default=None,
        description="What llama.cpp's GET /props says it runs: model_path, build_info, "
        "chat_template_sha256 (and its length), n_ctx, total_slots; null: no /props.",
    )
    listed_model: dict[str, Any] | None = Field(
        default=None,
        description="The model's entry in GET /v1/models as the server lists it (id, owner, "
        "llama.cpp's meta: n_params, size, n_ctx_train, vocab); null: not listed.",
    )
    model_file: ModelFile | None = Field(
        default=None, description="The sha256 of the model file --model-file names."
    )
    refused_sampling: dict[str, str] = Field(
        default_factory=dict,
        description="Sampling parameters the server rejected (HTTP 400 naming them) -> its "
        "message. They are not sent; each call records them as refused.",
    )

    def same_as(self, other: EndpointCapabilities | None) -> bool:
        """Equal apart from when it was probed and the trials' latencies."""
        if other is None:
            return False
        return _comparable(self) == _comparable(other)

    def identity(self) -> dict[str, Any]:
        """What the server says it is, for comparing two probes of one run."""
        data = self.model_dump(mode="json", include=set(IDENTITY_FIELDS))
        return {k: data.get(k) for k in IDENTITY_FIELDS}

    def changes_from(self, before: EndpointCapabilities | None) -> dict[str, list[Any]]:
        """Identity fields that differ from ``before`` -> [before, after]; {} when ``before`` is
        None or says the same. A field ``before`` did not record (an older probe) is not a
        change: nothing was known to change from."""
        if before is None:
            return {}
        old, new = before.identity(), self.identity()
        out: dict[str, list[Any]] = {}
        for name in IDENTITY_FIELDS:
            if old[name] is None or old[name] == "":
                continue
            if isinstance(old[name], dict) and isinstance(new[name], dict):
                for key in sorted(set(old[name]) | set(new[name])):
                    a, b = old[name].get(key), new[name].get(key)
                    if a != b:
                        out[f"{name}.{key}"] = [a, b]
            elif old[name] != new[name]:
                out[name] = [old[name], new[name]]
        return out

    def summary(self) -> str:
        """One line for headers and logs."""
        fmt: str = self.response_format or "none"
        if fmt == "json_object" and self.json_object_schema:
            fmt = "json_object+schema"
        ctx = f"ctx {self.context_window}" if self.context_window else "ctx ?"
        parts = [f"format {fmt}", ctx]
        if self.schema_dialect:
            parts.append(f"schema {self.schema_dialect}")
        if self.slots is not None:
            parts.append(f"{self.slots} slot{'s' if self.slots != 1 else ''}")
        if self.embedding_model:
            emb: str = self.embeddings
            if self.embeddings != "served" and self.embedding_fallback == "offline":
                emb = "missing, offline fallback"
            parts.append(f"embeddings {emb}")
        return ", ".join(parts)


def _comparable(c: EndpointCapabilities) -> dict[str, object]:
    d = c.model_dump(mode="json", exclude={"probed_at"})
    for name in (  # unset: as a record without them
        "sampling_defaults",
        "refused_sampling",
        "server_props",
        "listed_model",
        "model_file",
    ):
        if not d.get(name):
            d.pop(name, None)
    d["trials"] = [{k: v for k, v in t.items() if k != "latency_s"} for t in d["trials"]]
    return d
