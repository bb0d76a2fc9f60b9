"""The predictor hook: how remaining-demand estimates enter the observation (design §2).

A predictor looks at a task's revealed loss prefix and its target and says how many more batches
it needs and how likely it is to get there within the batches its deadline still allows.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["Estimate", "Predictor", "checked_predictor", "estimate_many"]


class Estimate(NamedTuple):
    """A predictor's answer for one task.

    Attributes:
        remaining: predicted batches still needed to reach the target; ``inf`` means unknown or
            beyond the predictor's horizon.
        p_success: predicted probability of reaching the target within the budget, in [0, 1].
    """

    remaining: float
    p_success: float


@runtime_checkable
class Predictor(Protocol):
    """Anything with ``estimate``; an ``estimate_batch`` method, if present, is used instead.

    ``estimate_batch(prefixes, targets, budgets) -> (remaining [B], p_success [B])`` takes a list of
    prefixes (1-D arrays of losses, ``prefix[0]`` the initial loss) and arrays of targets and
    budgets.
    """

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """Estimate the remaining batches of a task from its revealed ``prefix``."""
        ...


def checked_predictor(predictor: object) -> Predictor | None:
    """``predictor`` if it is None or a `Predictor`; else a TypeError saying what is needed."""
    if predictor is not None and not isinstance(predictor, Predictor):
        raise TypeError(
            f"predictor must have an estimate(prefix, target, budget) method, got {predictor!r}."
        )
    return predictor


def estimate_many(
    predictor: Predictor, prefixes: list[np.ndarray], targets: np.ndarray, budgets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Call ``predictor`` on several tasks, batched when it can, and check what comes back."""
    batch = getattr(predictor, "estimate_batch", None)
    if batch is not None:
        remaining, p_success = batch(prefixes, targets, budgets)
    else:
        pairs = [
            predictor.estimate(p, float(e), int(b)) for p, e, b in zip(prefixes, targets, budgets)
        ]
        remaining, p_success = zip(*pairs) if pairs else ((), ())
    remaining = np.asarray(remaining, dtype=np.float64)
    p_success = np.asarray(p_success, dtype=np.float64)
    name = type(predictor).__name__
    if remaining.shape != (len(prefixes),) or p_success.shape != (len(prefixes),):
        raise ValueError(
            f"predictor {name} returned shapes {remaining.shape} and {p_success.shape} "
            f"for {len(prefixes)} tasks."
        )
    if np.isnan(remaining).any() or (remaining < 0).any():
        raise ValueError(
            f"predictor {name} returned remaining={remaining}; need values >= 0 or inf."
        )
    if not np.all((p_success >= 0) & (p_success <= 1)):
        raise ValueError(f"predictor {name} returned p_success={p_success}; need values in [0, 1].")
    return remaining, p_success
