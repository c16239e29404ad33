"""The continuation contract, as rules over transitions (S3, S13). One place, all contracts.

A contract is two switches (:mod:`curiosity_tui.contract_switches`) and how checks are asked:

- ``evidence`` (rule 1): ``asserted`` — a check sets the requirement to what the checker claims,
  on its own statement; ``verified`` — a requirement moves to ``satisfied`` only with a
  *verified* evidence record (unverified evidence is stored ``proposed`` and leaves the status
  unchanged); ``supported`` — as verified, and the check itself leaves the status unchanged:
  the requirement moves to ``satisfied`` only when a judge the run admits (a human, or the
  model judge the plan names) says the verified passage establishes it (``contract/support.py``,
  decision 520).
- ``closure`` (rule 2): ``unconditional`` — ANSWER closes the focus (the unmet requirements are
  recorded on the close event, nothing more); ``binding`` — a node whose required facts are not
  all satisfied or waived cannot close, the attempt is recorded as ``closure_blocked``;
  ``binding+downgrade`` — binding, and downgrades are proposed by anyone and decided by a
  human curator only (the only route that can waive or weaken a requirement).

Presets: ``pilot-01`` (as run) = asserted + unconditional, its checks inside the deliverable
with its as-run instruction; ``pilot-02`` (default) = verified + binding+downgrade. Every
other combination checks as pilot-02 does: one checker call per requirement with passages
retrieved from the ledger's sources, so retrieval is available under every evidence rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from curiosity_tui.contract_switches import (
    PRESET_SWITCHES,
    ContractSwitches,
    canonical_name,
    switches_of,
)
from curiosity_tui.ledger.node_record import NodeRecord, requirements

CHECKER_INSTRUCTION_PILOT01 = (
    "For each required fact, say whether it is now established by facts on file or by "
    "knowledge you can state concretely."
)
CHECKER_INSTRUCTION_PILOT02 = (
    "For each required fact, say whether it is now established. A fact counts as established "
    "only if you cite one of the source passages given below: give its source id and copy the "
    "exact passage you rely on. Without such a passage, answer satisfied=false and say what is "
    "missing; your own knowledge may guide where to look but is not evidence."
)
#: evidence=asserted in a checker call: the model's statement counts, passages are offered
CHECKER_INSTRUCTION_ASSERTED = (
    "For each required fact, say whether it is now established by facts on file, by the "
    "source passages given below, or by knowledge you can state concretely. If you rely on a "
    "passage, give its source id and copy the exact passage."
)

Status = Literal["unchecked", "satisfied", "not_satisfied", "waived"]


@dataclass(frozen=True)
class ClosureDecision:
    close: bool
    unmet: list[str]


@dataclass(frozen=True)
class Contract:
    name: str
    switches: ContractSwitches
    checks_in_deliverable: bool  # pilot-01 ran checks inside the deliverable call
    checker_instruction: str
    #: store (and match-check) a passage a check cites even when evidence=asserted, so that
    #: asserted and verified marks can be told apart; pilot-01 as run kept no evidence records
    records_cited_evidence: bool = True

    @property
    def evidence_required(self) -> bool:
        """Rule 1 (evidence=verified or supported): satisfied needs verified evidence."""
        return self.switches.evidence != "asserted"

    @property
    def support_required(self) -> bool:
        """Rule 1 under evidence=supported: satisfied needs a judge's "yes" on verified
        evidence; a check alone never satisfies."""
        return self.switches.evidence == "supported"

    @property
    def closure_bound(self) -> bool:
        """Rule 2 (closure=binding…): unmet requirements block closure."""
        return self.switches.closure != "unconditional"

    @property
    def downgrades_allowed(self) -> bool:
        """closure=binding+downgrade: a human-decided route to waive or weaken a requirement."""
        return self.switches.closure == "binding+downgrade"

    def check_result(self, current: Status, claimed: str, evidence_verified: bool) -> Status:
        """The requirement's status after a check claiming ``claimed``."""
        if current == "waived":
            return "waived"
        if claimed == "not_satisfied":
            return "not_satisfied"
        if self.support_required:
            return current  # satisfied only by a support judgement (contract/support.py)
        if not self.evidence_required or evidence_verified:
            return "satisfied"
        return current  # unverified: stored as proposed, status unchanged

    @staticmethod
    def unmet(node: NodeRecord) -> list[str]:
        return [r["id"] for r in requirements(node) if r["status"] not in ("satisfied", "waived")]

    def on_answer(self, node: NodeRecord) -> ClosureDecision:
        unmet = self.unmet(node)
        if self.closure_bound and unmet:
            return ClosureDecision(close=False, unmet=unmet)
        return ClosureDecision(close=True, unmet=unmet)


PILOT_01 = Contract(
    "pilot-01", PRESET_SWITCHES["pilot-01"], True, CHECKER_INSTRUCTION_PILOT01, False
)
PILOT_02 = Contract("pilot-02", PRESET_SWITCHES["pilot-02"], False, CHECKER_INSTRUCTION_PILOT02)
CONTRACTS = {c.name: c for c in (PILOT_01, PILOT_02)}


def get_contract(name: str) -> Contract:
    """The contract a stored or given name stands for (InputError naming the problem if none)."""
    return _contract(canonical_name(name))


@lru_cache(maxsize=64)
def _contract(canon: str) -> Contract:
    if canon in CONTRACTS:
        return CONTRACTS[canon]
    sw = switches_of(canon)
    instruction = (
        CHECKER_INSTRUCTION_ASSERTED if sw.evidence == "asserted" else CHECKER_INSTRUCTION_PILOT02
    )
    return Contract(canon, sw, False, instruction)
