"""Classic baselines: first-come-first-served, earliest deadline first, and a random matching."""

from __future__ import annotations

from typing import Any

import numpy as np

from coreenv import CoreEnv, SlotTable
from mara_agents.schedulers.base import Scheduler, serve_in_order

__all__ = ["EDF", "FIFO", "RandomScheduler"]


class PriorityScheduler(Scheduler):
    """Serve the occupied slots in a priority order that depends only on which tasks are present.

    The decision is therefore recomputed only when a task enters or leaves a slot.
    """

    observation_predictor = None  # reads no estimates from the observation

    def reset(self, env: CoreEnv) -> None:
        """Forget the cached decision."""
        super().reset(env)
        self._version = -1

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """Nodes take the occupied slots in priority order."""
        table = self.env.slot_table()
        if table.version != self._version:
            occupied = np.flatnonzero(table.occupied)
            order = occupied[np.lexsort(self.priority(table, occupied))]
            self._actions = serve_in_order(self.env, order)
            self._version = table.version
        return dict(self._actions)

    def priority(self, table: SlotTable, slots: np.ndarray) -> tuple[np.ndarray, ...]:
        """Sort keys of ``slots`` for `np.lexsort` (last key primary; lower first)."""
        raise NotImplementedError


class FIFO(PriorityScheduler):
    """Serve the tasks that arrived first (one node each)."""

    name = "fifo"

    def priority(self, table: SlotTable, slots: np.ndarray) -> tuple[np.ndarray, ...]:
        """Arrival order (task ids increase with arrival)."""
        return (table.uid[slots],)


class EDF(PriorityScheduler):
    """Serve the tasks whose deadlines come first (ties: earlier arrival)."""

    name = "edf"

    def priority(self, table: SlotTable, slots: np.ndarray) -> tuple[np.ndarray, ...]:
        """Deadline, then arrival."""
        return (table.uid[slots], table.deadline[slots])


class RandomScheduler(Scheduler):
    """A uniformly random feasible matching of nodes to occupied slots.

    Its generator is seeded from the episode's seed (plus ``seed``), so an episode replays exactly.
    """

    observation_predictor = None  # reads no estimates from the observation

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def reset(self, env: CoreEnv) -> None:
        """Seed the generator from the episode."""
        super().reset(env)
        self.rng = np.random.default_rng([self.seed, env.np_random_seed or 0])

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """Nodes take a random permutation of the occupied slots."""
        occupied = np.flatnonzero(self.env.slot_table().occupied)
        return serve_in_order(self.env, self.rng.permutation(occupied))
