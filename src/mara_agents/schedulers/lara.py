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

On a cluster of nodes of different speeds or with a switch cost it plans with both and keeps
tasks on their nodes (`cluster`, design §4), in the spirit of LaiRA.
"""

from __future__ import annotations

import numpy as np

from coreenv import Predictor, SchedulerView, estimate_many, reads_context
from mara_agents.checks import check
from mara_agents.predictors import WLSPredictor
from mara_agents.schedulers.base import EpisodeMemo, Scheduler
from mara_agents.schedulers.cluster import assign_nodes, plan_capacity, restore_steps
from mara_agents.schedulers.planning import plan

__all__ = ["LARA", "explore_first", "to_plan"]


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
        check(explore, "an int >= 1", "LARA explore")
        self.explore = explore
        self._memo = EpisodeMemo()

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """Exploring tasks first, then the estimated feasible set (see the module docstring)."""
        ready = to_plan(view, self.explore)
        estimated = view.per_episode(self._remaining(view, ready), ready)
        return assign_nodes(view, [self._order(view, e, r) for e, r in enumerate(estimated)])

    def _order(self, view: SchedulerView, e: int, remaining: np.ndarray) -> np.ndarray:
        """The slots episode ``e`` serves, in order, given its ready tasks' estimates."""
        exploring, ready, free = explore_first(view, e, self.explore)
        if ready.size == 0 or free <= 0:
            return exploring
        rate, nodes = plan_capacity(view, e, exploring.size)
        steps = np.ceil(remaining / rate)  # inf stays inf: dropped
        time_left = view.deadline[e, ready] - view.t[e] - restore_steps(view, e, ready)
        planned = plan(steps, time_left, nodes)
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
            contexts = view.contexts(episodes, slots) if reads_context(self.predictor) else None
            return estimate_many(self.predictor, prefixes, targets, budgets, contexts)[0]

        episodes, slots = np.nonzero(ready)
        return np.array(self._memo.rows(view, episodes, slots, estimate), np.float64)
