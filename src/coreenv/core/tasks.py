"""Tasks: a loss curve with a target, an arrival and a deadline; targets and true demand."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from coreenv.curves import Curve

__all__ = ["Task", "TaskDraw"]


@dataclass(frozen=True)
class TaskDraw:
    """What a scenario draws for a new task, before the clock gives it an arrival step.

    Attributes:
        curve: the task's loss curve.
        target: the target loss epsilon_k.
        demand: R*_k, the first batch count whose loss is <= target (hidden from schedulers);
            None where it cannot be known in advance (live curves).
        window: d_k - b_k, steps from arrival to deadline.
    """

    curve: Curve
    target: float
    demand: int | None
    window: int


@dataclass(frozen=True)
class Task:
    """A task in the system. Its progress (the cursor) lives in the state's slot arrays."""

    uid: int
    curve: Curve
    target: float
    demand: int | None
    arrival: int
    deadline: int
    log_initial: float = field(init=False, repr=False)  # log L_0, for the features
    log_target: float = field(init=False, repr=False)  # log epsilon

    def __post_init__(self) -> None:
        object.__setattr__(self, "log_initial", math.log(self.curve.losses[0]))
        object.__setattr__(self, "log_target", math.log(self.target))

    def feasible(self, batches_per_step: int) -> bool | None:
        """Independently feasible: one node every step from arrival reaches the target in time.

        None when the demand is unknown.
        """
        if self.demand is None:
            return None
        return self.demand <= batches_per_step * (self.deadline - self.arrival)
