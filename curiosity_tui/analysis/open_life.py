"""The life of an open question (issue 26, item 1; decision 460).

A question's open life is the number of sessions from the one that created it (0 for the
seed) to the first one after which it stood closed, archived or merged; a question still
open or dormant after the run's last committed session is censored there. From the lives of
a run's questions: the Kaplan–Meier median open life, the pooled hazard of closure per
session at risk, and the share that went dormant (and, of those, came back).

The metrics need the run's per-session history (:attr:`RunData.timeline`); a run without
one (a run file written before it existed) gets None for each of them.
"""

from __future__ import annotations

from pydantic import BaseModel

from curiosity_tui.analysis.registry import register
from curiosity_tui.analysis.run_cache import per_run
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.analysis.survival import km_median, km_table, pooled_hazard
from curiosity_tui.analysis.timeline import NodeState
from curiosity_tui.ledger.node_record import NOT_LIVE

__all__ = ["QuestionLife", "open_lives"]


class QuestionLife(BaseModel):
    """One question's open life in one run."""

    node: str
    created: int
    #: sessions from creation to the end of its open life (closure, or the run's end)
    time: int
    #: True: closed, archived or merged at ``created + time``; False: censored
    event: bool
    #: how the open life ended: closed | archived | merged | open | dormant (censored)
    ended: str
    went_dormant: bool
    came_back: bool


def _came_back(states: list[NodeState], resurfaced: list[int]) -> tuple[bool, bool]:
    """(went dormant, came back): dormant after some session, and open again after a later
    one or resurfaced in a later session."""
    first = next((s.session for s in states if s.status == "dormant"), None)
    if first is None:
        return False, False
    back = any(s.session > first and s.status == "open" for s in states) or any(
        r > first for r in resurfaced
    )
    return True, back


def _life(run: RunData, nid: str, states: list[NodeState], last: int) -> QuestionLife:
    node = run.nodes.get(nid)
    created = node.created if node is not None else states[0].session
    end = next((s for s in states if s.status in NOT_LIVE), None)
    dormant, back = _came_back(
        [s for s in states if end is None or s.session <= end.session],
        node.resurfaced if node is not None else [],
    )
    if end is not None:
        return QuestionLife(
            node=nid,
            created=created,
            time=end.session - created,
            event=True,
            ended=end.status,
            went_dormant=dormant,
            came_back=back,
        )
    return QuestionLife(
        node=nid,
        created=created,
        time=last - created,
        event=False,
        ended=states[-1].status,
        went_dormant=dormant,
        came_back=back,
    )


def open_lives(run: RunData) -> list[QuestionLife] | None:
    """Every question's open life, in node-id order; None without a per-session history.
    Computed once per run (:mod:`~curiosity_tui.analysis.run_cache`): do not mutate it."""
    return per_run(run, "open_lives", _open_lives)


def _open_lives(run: RunData) -> list[QuestionLife] | None:
    if run.timeline is None:
        return None
    committed = run.committed_sessions()
    if not committed:
        return []
    last = committed[-1].session
    return [_life(run, nid, states, last) for nid, states in sorted(run.timeline.items()) if states]


def _observations(run: RunData) -> list[tuple[int, bool]] | None:
    lives = open_lives(run)
    return None if not lives else [(q.time, q.event) for q in lives]


@register(
    "open_life_median",
    definition="Kaplan–Meier median open life of the run's questions: sessions from the one "
    "that created a question (0 for the seed) to the first after which it stood closed, "
    "archived or merged; a question still open or dormant at the run's last session is "
    "censored there. The first time S(t) <= 0.5; undefined when S never falls that far.",
    unit="sessions",
    denominator="per run (questions)",
    group="lifecycle",
)
def open_life_median(run: RunData) -> float | None:
    obs = _observations(run)
    return None if obs is None else km_median(km_table(obs))


@register(
    "closure_hazard",
    definition="Hazard of closure per session: questions whose open life ended (closed, "
    "archived, merged) ÷ question-sessions at risk, a question being at risk in sessions 0 … "
    "its open life (open life + 1 sessions, censored ones included).",
    unit="closures per question-session",
    denominator="per run (question-sessions at risk)",
    group="lifecycle",
)
def closure_hazard(run: RunData) -> float | None:
    obs = _observations(run)
    return None if obs is None else pooled_hazard(obs)


@register(
    "dormant_share",
    definition="Share of the run's questions that stood dormant after some committed session "
    "of their open life.",
    unit="share",
    denominator="per run (questions)",
    group="lifecycle",
)
def dormant_share(run: RunData) -> float | None:
    lives = open_lives(run)
    return None if not lives else sum(q.went_dormant for q in lives) / len(lives)


@register(
    "dormant_return_share",
    definition="Of the questions that went dormant, the share that came back: open again "
    "after a later session, or resurfaced in a later session.",
    unit="share",
    denominator="per run (questions that went dormant)",
    group="lifecycle",
)
def dormant_return_share(run: RunData) -> float | None:
    lives = open_lives(run) or []
    dormant = [q for q in lives if q.went_dormant]
    return None if not dormant else sum(q.came_back for q in dormant) / len(dormant)
