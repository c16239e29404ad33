"""The ledger (S1, S2): journal, projection, queue, decay, rendering. Never imports textual."""

from curiosity_tui.ledger.ledger import Batch, Ledger, VerifyReport, iter_ledgers, replay, verify
from curiosity_tui.ledger.models import (
    CallRecord,
    Check,
    Downgrade,
    Event,
    EvidenceRecord,
    Fact,
    Mind,
    Node,
    Preserved,
    RequiredFact,
    ReturnCondition,
    RunMeta,
    SessionCounts,
    SessionRecord,
    Source,
)

__all__ = [
    "Batch",
    "CallRecord",
    "Check",
    "Downgrade",
    "Event",
    "EvidenceRecord",
    "Fact",
    "Ledger",
    "Mind",
    "Node",
    "Preserved",
    "RequiredFact",
    "ReturnCondition",
    "RunMeta",
    "SessionCounts",
    "SessionRecord",
    "Source",
    "VerifyReport",
    "iter_ledgers",
    "replay",
    "verify",
]
