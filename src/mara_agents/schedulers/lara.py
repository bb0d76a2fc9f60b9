"""LARA-style allocation (reconstructed), on discrete nodes.

LARA (Wang et al., ICML 2024) is not public in code; this follows the reconstruction of
design §4 (LARA), which is consistent with every published description of it:

1. **Explore**: a task is served until its estimate can be made (``explore`` batches): tasks
   still exploring come first, earliest deadline first.
2. **Estimate** the remaining batches of every ready task with the predictor (WLS by default;
   any `coreenv.Predictor`, so ``LARA(predictor=FMPredictor.pretrained())`` is LARA-FM).
3. **Select** the largest set of ready tasks that the estimates say can all meet their deadlines
   on the nodes (Moore–Hodgson's rule, `planning.plan`); a task whose estimate exceeds its time
   left is dropped.
4. **Allocate** the remaining nodes to that set earliest deadline first, then to other tasks that
   could still finish alone, and only then, with nodes that would otherwise idle, to the tasks
   estimated infeasible (fewest estimated batches first: serving them costs nothing and an
   estimate can be wrong); re-plan every step.
"""

from __future__ import annotations

import math

import numpy as np

from coreenv import Predictor, SchedulerView, estimate_many
from mara_agents.predictors import WLSPredictor
from mara_agents.schedulers.base import EpisodeMemo, Scheduler, serve_orders
from mara_agents.schedulers.planning import plan

__all__ = ["LARA", "TruthLARA", "explore_first", "to_plan"]


def to_plan(view: SchedulerView, explore: int) -> np.ndarray:
    """(E, K) the ready tasks whose estimates the plans need.

    Ready: ``explore`` batches trained; in an episode with a node left after exploration.
    """
    ready = view.occupied & (view.batches >= explore)
    exploring = (view.occupied & ~ready).sum(axis=1)
    return ready & (exploring < view.num_nodes)[:, None]


def explore_first(view: SchedulerView, e: int, explore: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Episode ``e``'s exploring slots (earliest deadline first), ready slots, and free nodes."""
    occupied = np.flatnonzero(view.occupied[e])
    batches = view.batches[e, occupied]
    exploring = occupied[batches < explore]
    exploring = exploring[np.argsort(view.deadline[e, exploring], kind="stable")]
    return exploring, occupied[batches >= explore], view.num_nodes - exploring.size


class LARA(Scheduler):
    """Explore each task, then serve the largest set its predictor says can all finish in time.

    Args:
        predictor: remaining-demand estimator (default `WLSPredictor`).
        explore: batches a task is served before its estimate is used. The default, 3, is the
            fewest a WLS fit takes; longer exploration did no better on the ID training runs
            (docs/benchmark.md).
    """

    observation_predictor = None  # reads no estimates from the observation

    name = "lara"

    def __init__(self, predictor: Predictor | None = None, explore: int = 3) -> None:
        self.predictor = predictor if predictor is not None else WLSPredictor()
        if explore < 1:
            raise ValueError(f"LARA explore must be >= 1 batch, got {explore!r}.")
        self.explore = explore
        self._memo = EpisodeMemo()

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """Exploring tasks first, then the estimated feasible set (see the module docstring)."""
        ready = to_plan(view, self.explore)
        estimated = view.per_episode(self._remaining(view, ready), ready)
        return serve_orders(view, [self._order(view, e, r) for e, r in enumerate(estimated)])

    def _order(self, view: SchedulerView, e: int, remaining: np.ndarray) -> np.ndarray:
        """The slots episode ``e`` serves, in order, given its ready tasks' estimates."""
        exploring, ready, free = explore_first(view, e, self.explore)
        if ready.size == 0 or free <= 0:
            return exploring
        steps = np.ceil(remaining / view.configs[e].batches_per_step)  # inf stays inf: dropped
        time_left = view.deadline[e, ready] - view.t[e]
        planned = plan(steps, time_left, free)
        left_out = np.ones(ready.size, bool)
        left_out[planned] = False
        dropped = np.flatnonzero(left_out)
        dropped = dropped[np.argsort(remaining[dropped], kind="stable")]
        return np.concatenate([exploring, ready[planned], ready[dropped]])

    def _remaining(self, view: SchedulerView, ready: np.ndarray) -> np.ndarray:
        """Estimated remaining batches of the ``ready`` (E, K) slots, in row-major order.

        Predicted once per (task, prefix), in one call for all episodes.
        """

        def estimate(episodes: np.ndarray, slots: np.ndarray) -> np.ndarray:
            prefixes, targets = view.prefixes(episodes, slots), view.target[episodes, slots]
            budgets = view.budgets(episodes, slots)
            return estimate_many(self.predictor, prefixes, targets, budgets)[0]

        episodes, slots = np.nonzero(ready)
        return np.array(self._memo.rows(view, episodes, slots, estimate), np.float64)


class TruthLARA(LARA):
    """LARA planning on the true remaining demand, times one log-normal error per task.

    A diagnostic, not a method: it reads the hidden truth of a clairvoyant view (as the oracle
    does) and prices estimation error in completion (`benchmarks/value_of_information.py`).
    Each task's estimates are its true remaining batches times ``exp(noise · z)``, one
    ``z ~ N(0, 1)`` per task drawn from ``seed``, the episode's seed and the task's number, so a
    seeded episode is played the same every time. ``noise = 0``: LARA on the true demand.
    """

    clairvoyant = True

    name = "lara_truth"

    def __init__(self, noise: float = 0.0, seed: int = 0, explore: int = 3) -> None:
        if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not noise >= 0:
            raise ValueError(f"TruthLARA noise must be a number >= 0, got {noise!r}.")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"TruthLARA seed must be an int >= 0, got {seed!r}.")
        super().__init__(explore=explore)
        self.noise = float(noise)
        self.seed = seed
        self._factors: dict[tuple[int, int], float] = {}

    def _remaining(self, view: SchedulerView, ready: np.ndarray) -> np.ndarray:
        """The ``ready`` slots' true remaining batches, each times its task's error factor."""
        if view.remaining is None:
            raise ValueError("TruthLARA needs a clairvoyant view: view(clairvoyant=True).")
        episodes, slots = np.nonzero(ready)
        remaining = view.remaining[episodes, slots].astype(np.float64)
        if (remaining < 0).any():
            raise ValueError("TruthLARA needs every task's true demand; this task set hides it.")
        if self.noise:
            seeds, uids = view.seed[episodes].tolist(), view.uid[episodes, slots].tolist()
            remaining *= [self._factor(s, u) for s, u in zip(seeds, uids)]
        return remaining

    def _factor(self, episode_seed: int, uid: int) -> float:
        """``exp(noise · z)`` of task ``uid`` of the episode seeded ``episode_seed``."""
        if episode_seed < 0:
            raise ValueError("TruthLARA with noise plays seeded episodes only (reset(seed=...)).")
        key = (episode_seed, uid)
        if key not in self._factors:
            z = np.random.default_rng([self.seed, episode_seed, uid]).standard_normal()
            self._factors[key] = math.exp(self.noise * z)
        return self._factors[key]
