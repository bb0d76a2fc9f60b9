"""Decision events: when a held joint action should be chosen anew (design §4, held decisions).

One step's action almost never changes an episode's outcome; a decision held over many steps
does. Training with held decisions lets one sampled decision carry the credit of what it causes.
A lane decides again when the slot table changes in a way the held action cannot carry over:

- a task enters or leaves a slot (``OCCUPIED`` changes, or a slot's ``LOG_TARGET`` changes, or
  its ``BATCHES`` fall: another task took the slot within one step);
- a task becomes ready (``READY`` changes: its estimates appear);
- ``feasibility`` is on and a task's estimated chance of success crosses one half;
- ``hold`` steps have passed since the lane's last decision.

Everything is read from the observation, so the same rule applies to any `coreenv` lane.
"""

from __future__ import annotations

import numpy as np

from coreenv import GLOBAL_FEATURES, SlotFeature

__all__ = ["DecisionEvents"]


class DecisionEvents:
    """Which of B lanes decide at this step, from their (B, M, D) observations.

    Args:
        num_nodes: M, nodes per lane (the observation's one-hot prefix).
        slot_width: F, columns of a slot block.
        hold: the most steps a decision is held (1: decide every step).
        feasibility: also decide when a task's estimated P(success) crosses 0.5.
    """

    def __init__(self, num_nodes: int, slot_width: int, hold: int, feasibility: bool) -> None:
        if isinstance(hold, bool) or not isinstance(hold, (int, np.integer)) or hold < 1:
            raise ValueError(f"hold must be an int >= 1 step, got {hold!r}.")
        self.start = num_nodes + len(GLOBAL_FEATURES)
        self.width = slot_width
        self.hold = int(hold)
        self.feasibility = feasibility
        self.last: np.ndarray | None = None  # (B, K, F) slot table at each lane's last step
        self.since = np.zeros(0, np.int64)  # (B,) steps since each lane's last decision

    def due(self, obs: np.ndarray, restarted: np.ndarray | None = None) -> np.ndarray:
        """(B,) bool: lanes that decide now; ``restarted`` lanes (a new episode) always do.

        Call once per step, before acting: it remembers this step's table for the next call.
        """
        table = obs[:, 0, self.start :].reshape(obs.shape[0], -1, self.width)
        if self.last is None:
            due = np.ones(obs.shape[0], bool)
            self.since = np.zeros(obs.shape[0], np.int64)
        else:
            f, last = SlotFeature, self.last
            changed = (table[..., f.OCCUPIED] != last[..., f.OCCUPIED]) | (
                table[..., f.READY] != last[..., f.READY]
            )
            changed |= table[..., f.LOG_TARGET] != last[..., f.LOG_TARGET]
            changed |= table[..., f.BATCHES] < last[..., f.BATCHES]
            if self.feasibility:
                changed |= (table[..., f.EST_P_SUCCESS] > 0.5) != (last[..., f.EST_P_SUCCESS] > 0.5)
            due = changed.any(axis=1) | (self.since + 1 >= self.hold)
            if restarted is not None:
                due |= restarted
        self.last = table.copy()
        self.since = np.where(due, 0, self.since + 1)
        return due
