"""HOP: hindsight-optimisation planning over sampled futures of each task's remaining demand.

LARA (`mara_agents.schedulers.lara`) plans once, on a point estimate of every task's remaining
batches. HOP plans once per *sampled future* and serves what the plans agree on:

1. **Explore** as LARA: a task is served first until it has trained ``explore`` batches
   (earliest deadline first).
2. **Sample** S futures of the remaining batches of every ready task: the predictor's
   ``sampled_crossings(prefixes, targets) -> (B, S)`` (``inf``: never within its horizon), as
   `FMPredictor` has. A predictor without it (`WLSPredictor`) gives one sample, its point
   estimate (`coreenv.predictor.estimate_many`), so HOP-WLS is a LARA-like planner.
3. **Plan in hindsight**: for each sample s, convert batches to steps as LARA does
   (``ceil(batches / batches_per_step)``) and take the Moore–Hodgson feasible set
   (`planning.select_feasible`) on the nodes left after exploration, each deadline moved
   ``slack`` steps earlier. A task's *score* is the
   share of samples in whose feasible set it lies.
4. **Allocate**: tasks scoring above ``min_share``, by descending score (ties: earliest deadline,
   then fewest estimated steps); then, on nodes that would otherwise idle, the others as LARA fills
   them: first those whose point estimate (the ``quantile`` sample) could still finish alone, least
   slack first, then the rest, fewest estimated batches first. Re-plan every step.

With every sample equal to the true demand, HOP serves what LARA with the true demand serves.
Like LARA it plans with the cluster's node speeds and switch cost (`cluster`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coreenv import Predictor, SchedulerView, estimate_many, reads_context
from coreenv.predictor import check_remaining
from mara_agents.checks import require
from mara_agents.schedulers.base import EpisodeMemo, Scheduler
from mara_agents.schedulers.cluster import assign_nodes, plan_capacity, restore_steps
from mara_agents.schedulers.lara import explore_first, to_plan
from mara_agents.schedulers.planning import select_feasible_many

__all__ = ["HOP", "HOPConfig", "HOP_TUNED"]


@dataclass(frozen=True)
class HOPConfig:
    """Settings of `HOP`. The defaults are LARA's and the loosest threshold; `HOP_TUNED` below."""

    explore: int = 3
    """Batches a task is served before its samples are used (LARA's 3: the fewest WLS needs)."""
    min_share: float = 0.0
    """A task enters the planned tier when its share of samples feasible exceeds this, in [0, 1)."""
    slack: int = 0
    """Steps taken off every deadline when planning: a margin against optimistic samples."""
    quantile: float = 0.5
    """Level of the point estimate (a sample) that orders the unplanned tasks, in (0, 1)."""

    def __post_init__(self) -> None:
        require(self, "an int >= 1", ("explore",))
        require(self, "an int >= 0", ("slack",))
        require(self, "in [0, 1)", ("min_share",))
        require(self, "in (0, 1)", ("quantile",))


HOP_TUNED = HOPConfig(slack=1, quantile=0.7)
"""HOP-FM's settings tuned on 100 training episodes (docs/schedulers.md;
`studies/tuning/tune_hop.py`): the sweep's ``hop`` and MARA's imitation teacher.
Every stage's best was within two standard errors of the defaults, +0.19 points over them in all."""


class HOP(Scheduler):
    """Serve the tasks that most sampled futures say belong to a feasible set.

    Args:
        predictor: gives the samples; ``sampled_crossings`` if it has one, else one sample, its
            point estimate. None: the shipped calibrated `FMPredictor.pretrained()` (needs torch;
            its ``sampled_crossings`` are the raw samples, uncalibrated).
        config: `HOPConfig` (default: explore 3 batches, any share above 0).
    """

    observation_predictor = None  # reads no estimates from the observation

    name = "hop"

    def __init__(self, predictor: Predictor | None = None, config: HOPConfig | None = None) -> None:
        if predictor is None:
            from mara_agents.predictors.flow import FMPredictor

            predictor = FMPredictor.pretrained()
        if config is None:
            config = HOPConfig()
        if not isinstance(config, HOPConfig):
            raise ValueError(f"HOP config must be a HOPConfig, got {type(config).__name__}.")
        self.predictor = predictor
        self.config = config
        self._memo = EpisodeMemo()

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """Exploring tasks first, then by share of feasible samples (see the module docstring)."""
        ready = to_plan(view, self.config.explore)
        sampled = view.per_episode(self._samples(view, ready), ready)
        return assign_nodes(view, [self._order(view, e, s) for e, s in enumerate(sampled)])

    def _order(self, view: SchedulerView, e: int, samples: np.ndarray) -> np.ndarray:
        """The slots episode ``e`` serves, in order, given its ready tasks' (R, S) samples."""
        exploring, ready, free = explore_first(view, e, self.config.explore)
        if ready.size == 0 or free <= 0:
            return exploring
        per_step, nodes = plan_capacity(view, e, exploring.size)
        time_left = view.deadline[e, ready] - view.t[e] - restore_steps(view, e, ready)
        time_left = time_left.astype(np.float64)  # (R,)
        steps = np.ceil(samples / per_step)
        score = self.scores(steps, time_left - self.config.slack, nodes)  # (R,)
        point = np.quantile(samples, self.config.quantile, axis=1, method="inverted_cdf")
        point_steps = np.ceil(point / per_step)
        # planned tier, by descending share (ties: earliest deadline, fewest steps)
        planned = np.flatnonzero(score > self.config.min_share)
        planned = planned[np.lexsort((point_steps[planned], time_left[planned], -score[planned]))]
        # fill as LARA: could finish alone (least slack first), then fewest batches first
        rest = np.ones(ready.size, bool)
        rest[planned] = False
        alone = np.flatnonzero(rest & (point_steps <= time_left))
        alone = alone[np.argsort(time_left[alone] - point_steps[alone], kind="stable")]
        dropped = np.flatnonzero(rest & ~(point_steps <= time_left))
        dropped = dropped[np.argsort(point[dropped], kind="stable")]
        order = np.concatenate([planned, alone, dropped])
        return np.concatenate([exploring, ready[order]])

    @staticmethod
    def scores(steps: np.ndarray, time_left: np.ndarray, num_nodes: float) -> np.ndarray:
        """(R,) share of the S samples in whose Moore–Hodgson feasible set each task lies.

        Args:
            steps: (R, S) sampled remaining steps of R tasks (``inf``: never).
            time_left: (R,) steps to each task's deadline.
            num_nodes: nodes to plan on (`cluster.plan_capacity`: fractional on mixed speeds).
        """
        return select_feasible_many(steps, time_left, num_nodes).mean(axis=1)

    def _samples(self, view: SchedulerView, ready: np.ndarray) -> np.ndarray:
        """(R, S) sampled remaining batches of the ``ready`` (E, K) slots, in row-major order.

        Computed once per (task, prefix), in one call for all episodes.
        """

        def sample(episodes: np.ndarray, slots: np.ndarray) -> np.ndarray:
            prefixes = view.prefixes(episodes, slots)
            targets = np.asarray(view.target[episodes, slots], np.float64)
            sampler = getattr(self.predictor, "sampled_crossings", None)
            contexts = view.contexts(episodes, slots) if reads_context(self.predictor) else None
            if sampler is None:
                budgets = view.budgets(episodes, slots)
                remaining, _ = estimate_many(self.predictor, prefixes, targets, budgets, contexts)
                return remaining[:, None]  # one sample: the point estimate
            asked = (prefixes, targets) if contexts is None else (prefixes, targets, contexts)
            sampled = np.asarray(sampler(*asked), np.float64)
            name = type(self.predictor).__name__
            if sampled.ndim != 2 or sampled.shape[0] != len(prefixes) or sampled.shape[1] < 1:
                raise ValueError(
                    f"predictor {name}.sampled_crossings returned shape {sampled.shape} for "
                    f"{len(prefixes)} tasks; need (tasks, samples >= 1)."
                )
            check_remaining(sampled, f"predictor {name}.sampled_crossings")
            return sampled

        episodes, slots = np.nonzero(ready)
        rows = self._memo.rows(view, episodes, slots, sample)
        return np.stack(rows) if rows else np.zeros((0, 1))
