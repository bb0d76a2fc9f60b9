"""How a task's target and true demand follow from its loss curve (design §2 workload)."""

from __future__ import annotations

import numpy as np

__all__ = ["demand_of", "target_at_fraction"]


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
