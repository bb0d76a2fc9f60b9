"""Tasks: a loss curve with a target, an arrival and a deadline; targets and true demand."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from coreenv.curves import Curve

__all__ = ["Task", "TaskDraw", "demand_of", "target_at_fraction"]


@dataclass(frozen=True)
class TaskDraw:
    """What a scenario draws for a new task, before the clock gives it an arrival step.

    Attributes:
        curve: the task's loss curve.
        target: the target loss epsilon_k.
        demand: R*_k, the first batch count whose loss is <= target (hidden from schedulers).
        window: d_k - b_k, steps from arrival to deadline.
    """

    curve: Curve
    target: float
    demand: int
    window: int


@dataclass(frozen=True)
class Task:
    """A task in the system. Its progress (the cursor) lives in the state's slot arrays."""

    uid: int
    curve: Curve
    target: float
    demand: int
    arrival: int
    deadline: int
    log_initial: float = field(init=False, repr=False)  # log L_0, for the features
    log_target: float = field(init=False, repr=False)  # log epsilon

    def __post_init__(self) -> None:
        object.__setattr__(self, "log_initial", math.log(self.curve.losses[0]))
        object.__setattr__(self, "log_target", math.log(self.target))

    def feasible(self, batches_per_step: int) -> bool:
        """Independently feasible: one node every step from arrival reaches the target in time."""
        return self.demand <= batches_per_step * (self.deadline - self.arrival)


def demand_of(losses: np.ndarray, target: float) -> int:
    """R* = min{n >= 1 : losses[n] <= target}: a loss must be revealed by training to count."""
    hits = np.flatnonzero(losses[1:] <= target)
    if hits.size == 0:
        raise ValueError(f"target {target!r} is never reached by this curve.")
    return int(hits[0]) + 1


def target_at_fraction(losses: np.ndarray, fraction: float) -> tuple[float, int]:
    """Target = the curve's running minimum at ``fraction`` of its length; return (target, R*).

    The index is pushed past the curve's first drop below its initial loss, so the target is
    always below ``losses[0]`` and the log-progress potential is well defined.
    """
    index = max(1, round(fraction * (len(losses) - 1)))
    target = float(losses[1 : index + 1].min())
    if target >= losses[0]:  # rare: a curve that rises before it falls
        index = int(np.argmax(losses[1:] < losses[0])) + 1  # banks guarantee one exists
        target = float(losses[1 : index + 1].min())
    return target, demand_of(losses[: index + 1], target)
