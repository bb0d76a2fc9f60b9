"""What a scenario draws for a task: a loss curve, its target, true demand and deadline window."""

from __future__ import annotations

from dataclasses import dataclass

from coreenv.curves import Curve

__all__ = ["NEVER", "TaskDraw"]

NEVER = 2**62
"""A step that never comes: an unknown crossing, the deadline of an empty slot, the arrival of
the padding after an episode's last task."""


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
