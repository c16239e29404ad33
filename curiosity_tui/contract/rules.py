"""The continuation contract, as rules over transitions (S3). One place, two contracts.

- ``pilot-01`` (as run): a check sets the requirement to what the checker claims, on its own
  statement; ANSWER vs PRESERVE is decided on Δ alone before checks are read; ANSWER closes the
  focus unconditionally (the unmet requirements are recorded on the close event, nothing more).
- ``pilot-02`` (default): a requirement moves to ``satisfied`` only with a *verified* evidence
  record (unverified evidence is stored ``proposed`` and leaves the status unchanged); a node
  whose required facts are not all satisfied or waived cannot close — the attempt is recorded as
  ``closure_blocked``; downgrades are proposed by anyone and decided by a human curator only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from curiosity_tui.errors import InputError

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

Status = Literal["unchecked", "satisfied", "not_satisfied", "waived"]


@dataclass(frozen=True)
class ClosureDecision:
    close: bool
    unmet: list[str]


@dataclass(frozen=True)
class Contract:
    name: str
    evidence_required: bool  # rule 1: satisfied needs verified evidence
    closure_bound: bool  # rule 2: unmet requirements block closure
    checks_in_deliverable: bool  # pilot-01 ran checks inside the deliverable call
    checker_instruction: str
    downgrades_allowed: bool = True  # pilot-01 had no downgrade route: nothing to propose or decide

    def check_result(self, current: Status, claimed: str, evidence_verified: bool) -> Status:
        """The requirement's status after a check claiming ``claimed``."""
        if current == "waived":
            return "waived"
        if claimed == "not_satisfied":
            return "not_satisfied"
        if not self.evidence_required or evidence_verified:
            return "satisfied"
        return current  # unverified: stored as proposed, status unchanged

    @staticmethod
    def unmet(node: dict[str, Any]) -> list[str]:
        rc = node.get("return_condition")
        if not rc:
            return []
        return [r["id"] for r in rc["required_facts"] if r["status"] not in ("satisfied", "waived")]

    def on_answer(self, node: dict[str, Any]) -> ClosureDecision:
        unmet = self.unmet(node)
        if self.closure_bound and unmet:
            return ClosureDecision(close=False, unmet=unmet)
        return ClosureDecision(close=True, unmet=unmet)


PILOT_01 = Contract(
    "pilot-01", False, False, True, CHECKER_INSTRUCTION_PILOT01, downgrades_allowed=False
)
PILOT_02 = Contract("pilot-02", True, True, False, CHECKER_INSTRUCTION_PILOT02)
CONTRACTS = {c.name: c for c in (PILOT_01, PILOT_02)}


def get_contract(name: str) -> Contract:
    try:
        return CONTRACTS[name]
    except KeyError:
        raise InputError(f"unknown contract {name!r}; choose pilot-01 or pilot-02") from None
