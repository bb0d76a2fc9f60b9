"""Scenarios (which tasks arrive when): `default` Bernoulli arrivals, `infeasible_stress` fixed."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from coreenv.config import EnvConfig
from coreenv.episodes.tasks import TaskDraw
from coreenv.curves import Curve, CurveSource, curve_problem

__all__ = ["SCENARIOS", "BernoulliArrivals", "InfeasibleStress", "Scenario", "make_scenario"]


class Scenario(ABC):
    """Draws the tasks of an episode and the steps they arrive during.

    The one drawer of both engines: `CoreEnv` and `BatchedCore` draw a whole episode at reset
    with `draw_episode`, from the episode's generator. The dynamics draw nothing, so this is the
    only randomness of an episode.
    """

    def __init__(self, config: EnvConfig, source: CurveSource) -> None:
        self.config = config
        self.source = source

    @abstractmethod
    def draw_episode(self, rng: np.random.Generator) -> list[tuple[int, TaskDraw]]:
        """Every task of a new episode and the step it arrives during, in arrival order.

        A task arriving during step t enters at t + 1.
        """

    @abstractmethod
    def arrival_end(self) -> int:
        """The first step from which no task arrives any more."""

    @abstractmethod
    def step_bound(self) -> int:
        """Steps after which no task can remain in the system."""


class BernoulliArrivals(Scenario):
    """design §2 default: while ``t < arrival_horizon`` a task arrives with probability ``p``.

    First the steps with an arrival (`arrival_steps`: one Bernoulli per step of the horizon);
    then each task, in arrival order, draws a curve from the task set, a target at a uniform
    fraction of the curve and a deadline window uniform in ``deadline_window``, independent of
    its demand.
    """

    def draw_episode(self, rng: np.random.Generator) -> list[tuple[int, TaskDraw]]:
        """The arrival steps, then one task for each."""
        return [(t, self.draw(rng)) for t in self.arrival_steps(rng).tolist()]

    def arrival_steps(self, rng: np.random.Generator) -> np.ndarray:
        """(n,) int64 the steps of the horizon that bring a task, ascending."""
        coins = rng.random(self.config.arrival_horizon)
        return np.flatnonzero(coins < self.config.arrival_prob).astype(np.int64, copy=False)

    def draw(self, rng: np.random.Generator) -> TaskDraw:
        """One task: a curve, a target on it and an independent deadline window."""
        cfg = self.config
        curve = checked(self.source.sample(rng), self.source)
        target, demand = self.source.target(curve, rng.uniform(*cfg.target_fraction))
        window = int(rng.integers(cfg.deadline_window[0], cfg.deadline_window[1] + 1))
        return TaskDraw(curve, target, demand, window)

    def arrival_end(self) -> int:
        """Arrivals continue until the horizon."""
        return self.config.arrival_horizon

    def step_bound(self) -> int:
        """The last arrival's deadline, plus one."""
        return self.config.arrival_horizon + self.config.deadline_window[1] + 1


class InfeasibleStress(Scenario):
    """design §2 stress test: 7 infeasible tasks first, earliest deadlines first, then 13 feasible.

    Deterministic: the same 20 tasks in every episode, whatever the seed.

    Timeline (steps, B = batches_per_step): infeasible task k enters at step k (k = 1..7), needs
    more than twice its window and has deadline ``D_I = 170``. Feasible task j enters at step 7 + j
    (j = 1..13), needs exactly ``12 B`` batches and has deadline ``D_F = D_I + 11``. A scheduler
    that ignores the infeasible tasks finishes the feasible ones one after another in the slot the
    infeasible ones leave free, by step 8 + 13·12 < D_F. FIFO and EDF give all M <= 7 nodes to the
    infeasible tasks until ``D_I``, after which 11 steps are too few for any feasible task: 0%.
    The independent-feasibility bound is 13 / 20 = 65%.
    """

    INFEASIBLE = 7
    FEASIBLE = 13
    SERVICE = 12  # steps of service each feasible task needs
    SCENARIO_SEED = 20_260_511  # fixed: the scenario is the same in every episode

    def __init__(self, config: EnvConfig, source: CurveSource) -> None:
        super().__init__(config, source)
        if source.name == "live":
            raise ValueError(
                "scenario 'infeasible_stress' needs recorded curves (exact demands); "
                "task_set 'live' has none."
            )
        if config.num_nodes > self.INFEASIBLE or config.num_slots < self.INFEASIBLE + 1:
            raise ValueError(
                "scenario 'infeasible_stress' needs num_nodes <= 7 (so the infeasible tasks can "
                "occupy every node) and num_slots >= 8 (so a feasible task fits beside them), got "
                f"num_nodes={config.num_nodes}, num_slots={config.num_slots}."
            )
        self.infeasible_deadline = 1 + self.INFEASIBLE + self.FEASIBLE * self.SERVICE + 6
        self.feasible_deadline = self.infeasible_deadline + self.SERVICE - 1
        self.schedule = self._build(np.random.default_rng(self.SCENARIO_SEED))

    def _build(self, rng: np.random.Generator) -> dict[int, TaskDraw]:
        b = self.config.batches_per_step
        schedule = {}
        for k in range(self.INFEASIBLE):  # arrives during step k, enters at k + 1
            window = self.infeasible_deadline - (k + 1)
            schedule[k] = self._draw(rng, window, 2 * b * window + 1, exact=False)
        for j in range(self.FEASIBLE):  # arrives during step 7 + j
            step = self.INFEASIBLE + j
            window = self.feasible_deadline - (step + 1)
            schedule[step] = self._draw(rng, window, self.SERVICE * b, exact=True)
        return schedule

    def _draw(self, rng: np.random.Generator, window: int, demand: int, exact: bool) -> TaskDraw:
        """A task whose demand is ``demand`` (exactly, or at least): its target is a record low.

        Targeting the loss at a point where the curve sets a new minimum makes R* that point.
        """
        for _ in range(2000):
            curve = checked(self.source.sample(rng), self.source)
            losses = curve.losses
            record = np.flatnonzero(losses[1:] < np.minimum.accumulate(losses)[:-1]) + 1
            record = record[record >= demand]
            if record.size and (not exact or record[0] == demand):
                index = int(record[0])
                return TaskDraw(curve, float(losses[index]), index, window)
        raise ValueError(
            f"scenario 'infeasible_stress' found no usable curve in task set {self.source.name!r}: "
            f"it needs curves with a new minimum at or after batch {demand}."
        )

    def draw_episode(self, rng: np.random.Generator) -> list[tuple[int, TaskDraw]]:
        """The fixed schedule; nothing is drawn."""
        return sorted(self.schedule.items())

    def arrival_end(self) -> int:
        """Arrivals end after the twentieth task."""
        return max(self.schedule) + 1

    def step_bound(self) -> int:
        """The feasible tasks' deadline, plus one."""
        return self.feasible_deadline + 1


SCENARIOS: dict[str, type[Scenario]] = {
    "default": BernoulliArrivals,
    "infeasible_stress": InfeasibleStress,
}
"""The class of each name in `coreenv.config.SCENARIO_NAMES` (tested to be the same names)."""


def make_scenario(config: EnvConfig, source: CurveSource) -> Scenario:
    """Build the scenario named by ``config.scenario``."""
    return SCENARIOS[config.scenario](config, source)


def checked(curve: Curve, source: CurveSource) -> Curve:
    """Reject a curve a user's source produced that no task could use (`curve_problem`'s rules)."""
    if source.validated:
        return curve
    problem = curve_problem(curve.losses)
    if problem is not None:
        raise ValueError(f"curve source {source.name!r} gave a curve that {problem.message}.")
    return curve
