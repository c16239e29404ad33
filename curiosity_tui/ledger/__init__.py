"""The ledger (S1, S2): journal, projection, queue, decay, rendering. Never imports textual."""

from curiosity_tui.ledger.ledger import Batch, Ledger, VerifyReport, iter_ledgers, replay, verify
from curiosity_tui.ledger.models import (
    CallRecord,
    Downgrade,
    Event,
    EvidenceRecord,
    Mind,
    RequiredFact,
    RunMeta,
    SessionCounts,
    SessionRecord,
    Source,
)
from curiosity_tui.ledger.node_record import NodeRecord

__all__ = [
    "Batch",
    "CallRecord",
    "Downgrade",
    "Event",
    "EvidenceRecord",
    "Ledger",
    "Mind",
    "NodeRecord",
    "RequiredFact",
    "RunMeta",
    "SessionCounts",
    "SessionRecord",
    "Source",
    "VerifyReport",
    "iter_ledgers",
    "replay",
    "verify",
]
