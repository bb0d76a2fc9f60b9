"""When agents decide (design §2, *Decisions*): every step, or at events of the slot table.

One step's action almost never changes an episode's outcome; a decision held over many steps
does. In the event form the last joint action is held until the slot table changes in a way the
held action cannot carry over, or ``hold`` steps have passed:

- a task enters or leaves a slot (``OCCUPIED`` changes, or a slot's ``LOG_TARGET`` changes, or
  its ``BATCHES`` fall: another task took the slot within one step);
- a task becomes ready (``READY`` changes: its estimates appear);
- ``feasibility`` is on and a task's estimated chance of success crosses one half.

Everything is read from the slot table as observed (float32), so one compiled rule
(`engine.decides`) serves the environment's event form, held in the engine (`engine.held_step`),
and MARA's trainers over `BatchedCore` lanes (`DecisionEvents`) alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coreenv.checks import checked_count
from coreenv.core import engine as e
from coreenv.core.features import slot_tables
from coreenv.errors import ConfigError

__all__ = [
    "DECISION_FORMS",
    "DecisionEvents",
    "Decisions",
    "make_decisions",
]

DECISION_FORMS = ("step", "events")
"""``Decisions.at``: decide every step (the default), or at events."""


@dataclass(frozen=True)
class Decisions:
    """When the agents choose: ``at="step"`` every step, ``at="events"`` at events (module doc).

    In the event form one ``step`` call plays the joint action, then holds it step after step
    until an event or ``hold`` steps, summing the rewards; ``infos`` say how many steps elapsed.
    It is no `EnvConfig` field: the same episodes (one config) are played in either form.
    """

    at: str = "step"
    """One of `DECISION_FORMS`."""
    hold: int = 8
    """The most steps a joint action is held in the event form."""
    feasibility: bool = False
    """Also decide when a task's estimated P(success) crosses one half (needs a predictor)."""

    def __post_init__(self) -> None:
        if self.at not in DECISION_FORMS:
            raise ConfigError(f"Decisions.at must be one of {DECISION_FORMS}, got {self.at!r}.")
        hold = checked_count(self.hold, "Decisions.hold", unit=" step", error=ConfigError)
        object.__setattr__(self, "hold", hold)
        if not isinstance(self.feasibility, (bool, np.bool_)):
            raise ConfigError(f"Decisions.feasibility must be a bool, got {self.feasibility!r}.")

    @property
    def held(self) -> bool:
        """Whether decisions are held between events."""
        return self.at == "events"


def make_decisions(decisions: Decisions | str | None) -> Decisions:
    """A `Decisions` from one, a form's name (``"step"``, ``"events"``) or None (every step)."""
    if decisions is None:
        return Decisions()
    if isinstance(decisions, str):
        return Decisions(at=decisions)
    if not isinstance(decisions, Decisions):
        raise ConfigError(
            f"decisions must be a Decisions, one of {DECISION_FORMS} or None, "
            f"got {type(decisions).__name__}: {decisions!r}."
        )
    return decisions


class DecisionEvents:
    """Which of B lanes decide at this step, from their slot tables (the module's rule).

    Args:
        num_nodes: M, nodes per lane (the one-hot prefix of a node's observation).
        slot_width: F, columns of a slot block.
        hold: the most steps a decision is held (1: decide every step).
        feasibility: also decide when a task's estimated P(success) crosses 0.5.
        speeds: the node-speed columns of the observations (`features.speed_columns`).
    """

    def __init__(
        self, num_nodes: int, slot_width: int, hold: int, feasibility: bool, speeds: int = 0
    ) -> None:
        self.num_nodes, self.width, self.speeds = num_nodes, slot_width, speeds
        self.hold = checked_count(hold, "hold", unit=" step")
        self.feasibility = feasibility
        self.last: np.ndarray | None = None  # (B, K, F) slot table at each lane's last step
        self.since = np.zeros(0, np.int64)  # (B,) steps since each lane's last decision

    def due(self, obs: np.ndarray, restarted: np.ndarray | None = None) -> np.ndarray:
        """(B,) bool from (B, M, D) node observations: `due_tables` on their slot tables."""
        return self.due_tables(slot_tables(obs, self.num_nodes, self.width, self.speeds), restarted)

    def due_tables(
        self,
        tables: np.ndarray,
        restarted: np.ndarray | None = None,
        lanes: np.ndarray | None = None,
    ) -> np.ndarray:
        """(L,) bool: lanes that decide now, from (L, K, F) slot tables; ``restarted`` lanes do.

        Call once per step a lane plays, before acting: it remembers this step's tables for the
        next call. ``lanes`` names the L lanes of ``tables`` among the B the first call saw (a
        lane that did not step is left out); None: all of them.
        """
        if self.last is None:
            due = np.ones(tables.shape[0], bool)
            self.last, self.since = tables.copy(), np.zeros(tables.shape[0], np.int64)
            return due
        rows = np.arange(tables.shape[0]) if lanes is None else lanes
        due = np.empty(rows.size, bool)
        e.due_rows(tables, self.last, self.since, rows, self.hold, self.feasibility, due)
        if restarted is not None:
            due |= restarted
            self.since[rows[restarted]] = 0
        return due

    def restart(self) -> None:
        """Forget every lane's history: the next call decides everywhere."""
        self.last = None
