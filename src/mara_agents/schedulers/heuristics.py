"""Classic baselines: first-come-first-served, earliest deadline first, and a random matching."""

from __future__ import annotations

from typing import Any

import numpy as np

from coreenv import CoreEnv, SchedulerView
from mara_agents.schedulers.base import Scheduler, serve_orders

__all__ = ["EDF", "FIFO", "RandomScheduler"]


class PriorityScheduler(Scheduler):
    """Serve the occupied slots in a priority order (one node each, the rest idle).

    The order depends only on which tasks are present, so playing one episode, the decision is
    made again only when a task enters or leaves a slot.
    """

    observation_predictor = None  # reads no estimates from the observation

    def reset(self, env: CoreEnv) -> None:
        """Forget the last decision."""
        super().reset(env)
        self._version = -1

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """`act_view` on this episode, reused while the same tasks are in the slots."""
        version = self.env.slot_version
        if version != self._version:
            self._actions, self._version = super().act(observations, infos), version
        return dict(self._actions)

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """Nodes take the occupied slots in priority order, in every episode at once."""
        order = np.lexsort((*self.priority(view), ~view.occupied), axis=1)  # occupied first
        counts = view.occupied.sum(axis=1).tolist()
        return serve_orders(view, [row[:n] for row, n in zip(order, counts)])

    def priority(self, view: SchedulerView) -> tuple[np.ndarray, ...]:
        """(E, K) sort keys of the slots for `np.lexsort` (last key primary; lower first)."""
        raise NotImplementedError


class FIFO(PriorityScheduler):
    """Serve the tasks that arrived first (one node each)."""

    name = "fifo"

    def priority(self, view: SchedulerView) -> tuple[np.ndarray, ...]:
        """Arrival order (task ids increase with arrival)."""
        return (view.uid,)


class EDF(PriorityScheduler):
    """Serve the tasks whose deadlines come first (ties: earlier arrival)."""

    name = "edf"

    def priority(self, view: SchedulerView) -> tuple[np.ndarray, ...]:
        """Deadline, then arrival."""
        return (view.uid, view.deadline)


class RandomScheduler(Scheduler):
    """A uniformly random feasible matching of nodes to occupied slots.

    Each episode's generator is seeded from the episode's seed (plus ``seed``), so an episode
    replays exactly, alone or in lockstep; an episode reset without a seed gets fresh entropy.
    """

    observation_predictor = None  # reads no estimates from the observation

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._generators: dict[int, np.random.Generator] = {}  # by SchedulerView.episode

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """Nodes take a random permutation of the occupied slots."""
        running = view.episode.tolist()
        self._generators = {
            episode: self._generators.get(episode) or _generator(self.seed, seed)
            for episode, seed in zip(running, view.seed.tolist())
        }
        orders = [
            self._generators[episode].permutation(np.flatnonzero(occupied))
            for episode, occupied in zip(running, view.occupied)
        ]
        return serve_orders(view, orders)


def _generator(seed: int, episode_seed: int) -> np.random.Generator:
    """The generator of an episode: from both seeds, or fresh entropy for an unseeded episode."""
    return np.random.default_rng([seed, episode_seed] if episode_seed >= 0 else None)
