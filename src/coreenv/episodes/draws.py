"""The generator calls that draw replayed tasks, one task at a time or a whole episode at once.

`BernoulliArrivals.draw` on a `CurveBank` makes three calls per task: ``integers(N)`` (the curve
row), ``uniform(low, high)`` (the target fraction) and ``integers(w_low, w_high + 1)`` (the
window). Python call overhead makes them most of the cost of starting an episode, so
`bulk_draws` reproduces them from the raw PCG64 stream in a few array operations: numpy draws
bounded integers by Lemire's method from 32-bit halves of 64-bit outputs (the second half kept
for the next 32-bit draw) and doubles from the top 53 bits of a 64-bit output. So each task
takes two outputs: the first's low half for the row, its high half for the window, the second for
the fraction. That is numpy's implementation, not its documented contract: `bulk_agrees` checks
it against the calls themselves before it is used, and the calls are made one by one where it
does not hold (or where Lemire's method would redraw, about once in 10^7 tasks).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from gymnasium.utils import seeding

__all__ = ["TaskRanges", "bulk_agrees", "bulk_draws", "scalar_draws"]

_LOW32 = np.uint64(0xFFFFFFFF)
_DOUBLE_UNIT = 1.0 / 9007199254740992.0  # 2**-53


class TaskRanges(NamedTuple):
    """What a replayed task draws from: rows ``[0, curves)``, fractions, windows (inclusive)."""

    curves: int
    fraction: tuple[float, float]
    window: tuple[int, int]


Draws = tuple[np.ndarray, np.ndarray, np.ndarray]  # rows (n,) int64, fractions (n,), windows (n,)


def scalar_draws(rng: np.random.Generator, n: int, ranges: TaskRanges) -> Draws:
    """The generator calls of `BernoulliArrivals.draw` for ``n`` tasks, in its order."""
    integers, uniform = rng.integers, rng.uniform
    (low, high), (w_low, w_high) = ranges.fraction, ranges.window
    rows, fractions, windows = [], [], []
    for _ in range(n):  # curve (CurveBank.sample), target fraction, deadline window
        rows.append(integers(ranges.curves))
        fractions.append(uniform(low, high))
        windows.append(integers(w_low, w_high + 1))
    return np.array(rows, np.int64), np.array(fractions, np.float64), np.array(windows, np.int64)


def bulk_draws(rng: np.random.Generator, n: int, ranges: TaskRanges) -> Draws | None:
    """What `scalar_draws` gives, from ``2 n`` raw outputs.

    None where Lemire's method would redraw (the generator is then spent: start again from the
    seed).
    """
    raw = rng.bit_generator.random_raw(2 * n)
    first, second = raw[0::2], raw[1::2]
    rows = _lemire(first & _LOW32, ranges.curves)
    w_low, w_high = ranges.window
    windows = _lemire(first >> np.uint64(32), w_high + 1 - w_low)
    if rows is None or windows is None:
        return None
    low, high = ranges.fraction
    fractions = low + (high - low) * ((second >> np.uint64(11)) * _DOUBLE_UNIT)
    return rows, fractions, windows + w_low


def _lemire(halves: np.ndarray, count: int) -> np.ndarray | None:
    """Integers in ``[0, count)`` from 32-bit draws by Lemire's method; None if one redraws."""
    scaled = halves * np.uint64(count)
    if ((scaled & _LOW32) < (2**32 - count) % count).any():
        return None
    return (scaled >> np.uint64(32)).astype(np.int64)


@functools.cache
def bulk_agrees(ranges: TaskRanges) -> bool:
    """Whether `bulk_draws` gives exactly `scalar_draws` here, for these ranges.

    It needs two or more choices of row and of window (a range of one value draws nothing) and
    ranges of 32 bits; then it is checked on a few episodes (numpy's algorithms, or a platform
    that fuses the fraction's multiply-add, could differ).
    """
    if not (2 <= ranges.curves < 2**32 and 2 <= ranges.window[1] + 1 - ranges.window[0] < 2**32):
        return False
    for seed in range(4):
        expected = scalar_draws(seeding.np_random(seed)[0], 64, ranges)
        got = bulk_draws(seeding.np_random(seed)[0], 64, ranges)
        if got is None or not all(np.array_equal(a, b) for a, b in zip(expected, got)):
            return False
    return True
