"""Decoding sampled futures into remaining batches and a probability of success.

Each trajectory's first crossing of ``log(ε / L_n)`` (linear between grid points) gives remaining
batches; the estimate is their median, ``p_success`` the share that cross within the budget.
Compiled (the engine's `coreenv.core.engine.compiled`): a predictor decodes once per step, a few
tasks at a time, where numpy's per-call cost would be most of the work.
"""

from __future__ import annotations

import numpy as np

from coreenv.core import compiled

__all__ = ["crossings", "decode"]

FLOOR = 1e-12
"""Least fall between two grid points that the interpolation divides by (in the futures' dtype)."""
SLACK = 1e-9
"""Taken off an interpolated crossing before rounding it up, so an exact integer stays itself."""


def crossings(futures: np.ndarray, log_target: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(B, S) batches until each sampled trajectory first reaches its target (``inf``: never).

    The crossing lies between the last grid point above the target and the first at or below
    it, interpolated linearly (from offset 0 at ``z = 0`` if the first is), and rounded up to a
    batch, at least 1. The fall between the two points is taken in the futures' dtype.

    Args:
        futures: (B, S, G) sampled ``z`` on the grid ``offsets``, float32 or float64.
        log_target: (B,) ``log(ε / L_n)`` (negative: the target lies below the current loss).
        offsets: (G,) the future offsets, in batches, of the grid.
    """
    futures = np.ascontiguousarray(futures)
    out = np.empty(futures.shape[:2])
    floor = futures.dtype.type(FLOOR)
    _crossings(futures, np.asarray(log_target, np.float64), np.asarray(offsets), floor, out)
    return out


def decode(
    futures: np.ndarray, log_target: np.ndarray, offsets: np.ndarray, budgets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Remaining batches (median over samples) and P(crossing within budget), per task.

    ``futures``, ``log_target`` and ``offsets`` as in `crossings`; ``budgets`` (B,) batches
    available.
    """
    remaining = crossings(futures, log_target, offsets)  # (B, S)
    median, p_success = np.empty(len(remaining)), np.empty(len(remaining))
    _summarise(remaining, np.asarray(budgets, np.float64), median, p_success)
    return median, p_success


@compiled
def _crossings(
    futures: np.ndarray,
    log_target: np.ndarray,
    offsets: np.ndarray,
    floor: float,
    out: np.ndarray,
) -> None:
    """`crossings` into ``out`` (B, S); ``floor`` is `FLOOR` in the futures' dtype."""
    zero = futures.dtype.type(0.0)
    for b in range(futures.shape[0]):
        target = log_target[b]
        for s in range(futures.shape[1]):
            path = futures[b, s]
            first = -1
            for g in range(path.shape[0]):
                if path[g] <= target:
                    first = g
                    break
            if first < 0:
                out[b, s] = np.inf
                continue
            before_t, before_z = 0, zero
            if first > 0:
                before_t, before_z = offsets[first - 1], path[first - 1]
            at_z, at_t = path[first], offsets[first]
            fall = before_z - at_z  # in the futures' dtype
            share = (before_z - target) / max(fall, floor)
            share = min(max(share, 0.0), 1.0)
            crossing = np.ceil(before_t + share * (at_t - before_t) - SLACK)
            out[b, s] = max(crossing, 1.0)


@compiled
def _summarise(
    remaining: np.ndarray, budgets: np.ndarray, median: np.ndarray, p_success: np.ndarray
) -> None:
    """Each row's median of ``remaining`` (B, S) and share at most its budget, into the outputs."""
    samples = remaining.shape[1]
    for b in range(remaining.shape[0]):
        ordered = np.sort(remaining[b])
        half = samples // 2
        if samples % 2:
            median[b] = ordered[half]
        else:
            median[b] = (ordered[half - 1] + ordered[half]) / 2.0
        within = 0
        for s in range(samples):
            if remaining[b, s] <= budgets[b]:
                within += 1
        p_success[b] = within / samples
