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

from typing import Any

import numpy as np

from coreenv import CoreEnv, Predictor
from coreenv.predictor import estimate_many
from mara_agents.predictors import WLSPredictor
from mara_agents.schedulers.base import Scheduler, serve_in_order
from mara_agents.schedulers.planning import plan

__all__ = ["LARA"]


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

    def reset(self, env: CoreEnv) -> None:
        """Start an episode with no cached estimates."""
        super().reset(env)
        self._estimates: dict[tuple[int, int], float] = {}  # (task uid, batches) -> remaining

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """Exploring tasks first, then the estimated feasible set (see the module docstring)."""
        table = self.env.slot_table()
        occupied = np.flatnonzero(table.occupied)
        batches = table.batches[occupied]
        exploring = occupied[batches < self.explore]
        exploring = exploring[np.argsort(table.deadline[exploring], kind="stable")]
        ready = occupied[batches >= self.explore]
        if ready.size == 0:
            return serve_in_order(self.env, exploring)
        per_step = self.env.config.batches_per_step
        remaining = self._remaining(table, ready)
        steps = np.ceil(remaining / per_step)  # inf stays inf: such tasks are dropped
        time_left = table.deadline[ready] - table.t
        free = self.env.config.num_nodes - exploring.size
        if free <= 0:
            return serve_in_order(self.env, exploring)
        planned = plan(steps, time_left, free)
        left_out = np.ones(ready.size, bool)
        left_out[planned] = False
        dropped = np.flatnonzero(left_out)
        dropped = dropped[np.argsort(remaining[dropped], kind="stable")]
        return serve_in_order(self.env, np.concatenate([exploring, ready[planned], ready[dropped]]))

    def _remaining(self, table, slots: np.ndarray) -> np.ndarray:
        """Estimated remaining batches of ``slots``, predicted once per (task, prefix)."""
        keys = [(int(table.uid[j]), int(table.batches[j])) for j in slots]
        missing = [i for i, key in enumerate(keys) if key not in self._estimates]
        if missing:
            todo = slots[missing]
            budgets = self.env.config.batches_per_step * (table.deadline[todo] - table.t)
            prefixes = [table.prefix(int(j)) for j in todo]
            remaining, _ = estimate_many(self.predictor, prefixes, table.target[todo], budgets)
            for i, value in zip(missing, remaining.tolist()):
                self._estimates[keys[i]] = value
        return np.array([self._estimates[key] for key in keys], np.float64)
