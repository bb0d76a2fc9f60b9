"""Decoding sampled futures into remaining batches and a probability of success.

Each trajectory's first crossing of ``log(ε / L_n)`` (linear between grid points) gives remaining
batches; the estimate is their median, ``p_success`` the share that cross within the budget.
"""

from __future__ import annotations

import numpy as np

__all__ = ["crossings", "decode"]


def crossings(futures: np.ndarray, log_target: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """(B, S) batches until each sampled trajectory first reaches its target (``inf``: never).

    Args:
        futures: (B, S, G) sampled ``z`` on the grid ``offsets``.
        log_target: (B,) ``log(ε / L_n)`` (negative: the target lies below the current loss).
        offsets: (G,) the future offsets, in batches, of the grid.
    """
    below = futures <= log_target[:, None, None]  # (B, S, G)
    crossed = below.any(axis=2)
    first = np.argmax(below, axis=2)  # (B, S) index of the first grid point at or below
    before_t = np.where(first > 0, offsets[np.maximum(first - 1, 0)], 0)
    before_z = np.where(
        first > 0, np.take_along_axis(futures, np.maximum(first - 1, 0)[..., None], 2)[..., 0], 0.0
    )
    at_z = np.take_along_axis(futures, first[..., None], 2)[..., 0]
    at_t = offsets[first]
    share = np.clip((before_z - log_target[:, None]) / np.maximum(before_z - at_z, 1e-12), 0.0, 1.0)
    crossing = np.ceil(before_t + share * (at_t - before_t) - 1e-9)
    return np.where(crossed, np.maximum(crossing, 1.0), np.inf)


def decode(
    futures: np.ndarray, log_target: np.ndarray, offsets: np.ndarray, budgets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Remaining batches (median over samples) and P(crossing within budget), per task.

    ``futures``, ``log_target`` and ``offsets`` as in `crossings`; ``budgets`` (B,) batches
    available.
    """
    remaining = crossings(futures, log_target, offsets)  # (B, S)
    p_success = np.mean(remaining <= budgets[:, None], axis=1)
    return np.median(remaining, axis=1), p_success
