"""The predictor hook: how remaining-demand estimates enter the observation (design §2).

A predictor looks at a task's revealed loss prefix and its target and says how many more batches
it needs and how likely it is to get there within the batches its deadline still allows; if
`EnvConfig.estimate_quantiles` asks for them, also quantiles of the batches it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from coreenv.context import Description, TaskContext, reads_context

__all__ = [
    "Estimate",
    "Predictor",
    "checked_predictor",
    "estimate_many",
    "observed_estimates",
    "quantiles_many",
]

_QUANTILES_NEEDED = (
    "EnvConfig.estimate_quantiles needs a predictor with "
    "estimate_quantiles(prefixes, targets, levels), got {predictor!r}."
)


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
    """Anything with ``estimate``; two more methods are optional.

    ``estimate_batch(prefixes, targets, budgets) -> (remaining [B], p_success [B])``, if present,
    is used instead of ``estimate``; it takes a list of prefixes (1-D arrays of losses,
    ``prefix[0]`` the initial loss) and arrays of targets and budgets.

    ``estimate_quantiles(prefixes, targets, levels) -> quantiles [B, Q]`` is needed only when
    `EnvConfig.estimate_quantiles` is set: ``quantiles[i, q]`` is the ``levels[q]`` quantile of
    the batches task ``i`` still needs to reach its target, ``inf`` beyond the predictor's horizon,
    non-decreasing along the levels (``levels`` (Q,), strictly increasing in (0, 1)).

    A predictor with ``reads_context = True`` is asked ``estimate_batch(prefixes, targets,
    budgets, contexts)`` instead, a `coreenv.context.TaskContext` per task: what it is and the
    tasks its episode finished (`EnvConfig.information`).
    """

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """Estimate the remaining batches of a task from its revealed ``prefix``."""
        ...


def checked_predictor(predictor: object, levels: tuple[float, ...] = ()) -> Predictor | None:
    """``predictor`` if None or a `Predictor` (with quantiles if ``levels``); else a TypeError."""
    if predictor is None:
        return None
    if not isinstance(predictor, Predictor):
        raise TypeError(
            f"predictor must have an estimate(prefix, target, budget) method, got {predictor!r}."
        )
    if levels and not hasattr(predictor, "estimate_quantiles"):
        raise TypeError(_QUANTILES_NEEDED.format(predictor=predictor))
    return predictor


def check_remaining(remaining: np.ndarray, source: str) -> None:
    """Raise a ValueError naming ``source`` unless every remaining-batch count is >= 0 or inf."""
    if np.isnan(remaining).any() or (remaining < 0).any():
        raise ValueError(f"{source} returned remaining={remaining}; need values >= 0 or inf.")


def estimate_many(
    predictor: Predictor,
    prefixes: list[np.ndarray],
    targets: np.ndarray,
    budgets: np.ndarray,
    contexts: Sequence[TaskContext] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Call ``predictor`` on several tasks, batched when it can, and check what comes back.

    A predictor that `reads_context` is called ``estimate_batch(prefixes, targets, budgets,
    contexts)``, one `TaskContext` per task (an empty one each where ``contexts`` is None); the
    ``contexts`` of others are not passed.
    """
    if reads_context(predictor):
        if contexts is None:
            contexts = [TaskContext(Description())] * len(prefixes)
        remaining, p_success = predictor.estimate_batch(prefixes, targets, budgets, contexts)
    elif (batch := getattr(predictor, "estimate_batch", None)) is not None:
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
    check_remaining(remaining, f"predictor {name}")
    if not np.all((p_success >= 0) & (p_success <= 1)):
        raise ValueError(f"predictor {name} returned p_success={p_success}; need values in [0, 1].")
    return remaining, p_success


def quantiles_many(
    predictor: Predictor, prefixes: list[np.ndarray], targets: np.ndarray, levels: np.ndarray
) -> np.ndarray:
    """(B, Q) ``predictor.estimate_quantiles`` of B tasks at Q levels, checked."""
    method = getattr(predictor, "estimate_quantiles", None)
    if method is None:
        raise TypeError(_QUANTILES_NEEDED.format(predictor=predictor))
    quantiles = np.asarray(method(prefixes, targets, levels), dtype=np.float64)
    name = type(predictor).__name__
    shape = (len(prefixes), len(levels))
    if quantiles.shape != shape:
        raise ValueError(
            f"predictor {name} returned quantiles of shape {quantiles.shape} for "
            f"{len(prefixes)} tasks and {len(levels)} levels; need {shape}."
        )
    for bad, need in (
        (np.isnan(quantiles) | (quantiles < 0), "values >= 0 or inf"),
        (quantiles[:, 1:] < quantiles[:, :-1], f"values non-decreasing along the levels {levels}"),
    ):
        if bad.any():
            i = int(bad.any(axis=1).argmax())
            raise ValueError(
                f"predictor {name} returned quantiles {quantiles[i].tolist()} for task {i}; "
                f"need {need}."
            )
    return quantiles


def observed_estimates(
    predictor: Predictor,
    prefixes: list[np.ndarray],
    targets: np.ndarray,
    budgets: np.ndarray,
    levels: tuple[float, ...],
    contexts: Sequence[TaskContext] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """What the observation shows of ``predictor`` for these tasks, in both engines.

    Remaining batches and P(success) (`estimate_many`, given ``contexts``), then the (B, Q)
    quantiles at ``levels`` (`quantiles_many`), or None without levels.
    """
    remaining, p_success = estimate_many(predictor, prefixes, targets, budgets, contexts)
    if not levels:
        return remaining, p_success, None
    return remaining, p_success, quantiles_many(predictor, prefixes, targets, np.array(levels))
