"""Scenarios (which tasks arrive when): `default` Bernoulli arrivals, `infeasible_stress` fixed."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core.tasks import TaskDraw
from coreenv.curves import Curve, CurveSource, curve_problem

__all__ = ["SCENARIOS", "BernoulliArrivals", "InfeasibleStress", "Scenario", "make_scenario"]


class Scenario(ABC):
    """Produces the tasks that arrive during each step."""

    def __init__(self, config: EnvConfig, source: CurveSource) -> None:
        self.config = config
        self.source = source

    @abstractmethod
    def reset(self, rng: np.random.Generator) -> None:
        """Start a new episode."""

    @abstractmethod
    def arrivals(self, t: int, rng: np.random.Generator) -> list[TaskDraw]:
        """Tasks arriving during step ``t`` (they enter at ``t + 1``)."""

    @abstractmethod
    def pending(self, t: int) -> bool:
        """Whether any task may still arrive during step ``t`` or later."""

    @abstractmethod
    def step_bound(self) -> int:
        """Steps after which no task can remain in the system."""


class BernoulliArrivals(Scenario):
    """design §2 default: while ``t < arrival_horizon`` a task arrives with probability ``p``.

    The steps with an arrival are drawn at reset (one Bernoulli per step of the horizon, which is
    the same process as drawing them step by step); each task then draws, when it arrives, a curve
    from the task set, a target at a uniform fraction of the curve and a deadline window uniform in
    ``deadline_window``, independent of its demand.
    """

    def reset(self, rng: np.random.Generator) -> None:
        """Draw which steps of the horizon bring a task."""
        coins = rng.random(self.config.arrival_horizon)
        self.arrival_steps = frozenset(np.flatnonzero(coins < self.config.arrival_prob).tolist())

    def arrivals(self, t: int, rng: np.random.Generator) -> list[TaskDraw]:
        """The task arriving during step ``t``, if it is an arrival step."""
        return [self.draw(rng)] if t in self.arrival_steps else []

    def draw(self, rng: np.random.Generator) -> TaskDraw:
        """One task: a curve, a target on it and an independent deadline window."""
        cfg = self.config
        curve = checked(self.source.sample(rng), self.source)
        target, demand = self.source.target(curve, rng.uniform(*cfg.target_fraction))
        window = int(rng.integers(cfg.deadline_window[0], cfg.deadline_window[1] + 1))
        return TaskDraw(curve, target, demand, window)

    def pending(self, t: int) -> bool:
        """Arrivals continue until the horizon."""
        return t < self.config.arrival_horizon

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

    def reset(self, rng: np.random.Generator) -> None:
        """The schedule is fixed; nothing is drawn."""

    def arrivals(self, t: int, rng: np.random.Generator) -> list[TaskDraw]:
        """The scheduled task of step ``t``, if any."""
        draw = self.schedule.get(t)
        return [] if draw is None else [draw]

    def pending(self, t: int) -> bool:
        """Arrivals end after the twentieth task."""
        return t <= max(self.schedule)

    def step_bound(self) -> int:
        """The feasible tasks' deadline, plus one."""
        return self.feasible_deadline + 1


SCENARIOS: dict[str, type[Scenario]] = {
    "default": BernoulliArrivals,
    "infeasible_stress": InfeasibleStress,
}
"""The scenarios `EnvConfig.scenario` may name (the one list of them)."""


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
