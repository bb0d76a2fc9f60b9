"""LARA's discounted ridge WLS power-law fit, compiled: for one prefix, many, or the ready slots.

A prefix is read as its log-losses ``logs[offset + s]``, ``s = 0..n`` (``s = 0`` the initial
loss, never fitted). Model ``ln L(s) = θ₁ ln s + θ₂`` over ``s = 1..n``:

    θ̂ = argmin_θ  λ‖θ‖² + Σₛ γ^(n-s) (θ₁ ln s + θ₂ − ln L(s))²,

with closed form ``θ̂ = V⁻¹ Σ γ^(n-s) xₛ ln L(s)``, ``V = λI + Σ γ^(n-s) xₛxₛᵀ``,
``x = (ln s, 1)``. Points older than ``window`` batches (weight below 1e-12) are left out. The
target ``ε`` is crossed at ``s* = exp((ln ε − θ₂) / θ₁)``: ``⌈s* − 1e-9⌉ − n`` more batches, at
least 1, ``inf`` for a flat or rising fit or a crossing past ``n + horizon + 1``. P(success)
treats the fit's weighted residual spread as Gaussian noise on ``ln L`` at ``s = n + budget``:
``P(ln L ≤ ln ε)``, 0 for a budget of 0 or less. A prefix with fewer than ``min_points``
fitted losses, or a singular ``V``, gives ``(inf, 0)``.

The settings travel as ``powers`` (γ^k for k = 0, 1, …; a point k batches back weighs
``powers[min(k, powers.size - 1)]``, so γ = 1 is ``[1.0]``), ``window``, ``ridge``,
``min_points`` and ``horizon`` (`coreenv.wls.WLSEstimates` makes them). Compiled by Numba; with
``NUMBA_DISABLE_JIT=1`` the same source runs as Python.
"""

from __future__ import annotations

import math

import numpy as np

from coreenv.core.engine import (
    BATCH_SCALE,
    BATCHES,
    CURSOR,
    DEADLINE,
    EST_P,
    EST_REMAINING,
    OBS_BOUND,
    OFFSET,
    SPEEDS,
    TARGET,
    T,
    compiled,
)
from coreenv.core.features import SlotFeature

__all__ = ["estimate", "estimate_prefixes", "estimate_slots", "fit"]

_REMAINING_COL, _P_COL = int(SlotFeature.EST_REMAINING), int(SlotFeature.EST_P_SUCCESS)


@compiled
def fit(
    logs: np.ndarray,
    offset: int,
    n: int,
    powers: np.ndarray,
    window: int,
    ridge: float,
    min_points: int,
) -> tuple[bool, float, float, float, float, float, float, float]:
    """The fit of the prefix ``logs[offset : offset + n + 1]``.

    Returns ``(fitted, slope θ₁, intercept θ₂, variance, s0, s1, s2, det)``: the weighted residual
    variance of ``ln L`` around the fit, ``V = [[s2, s1], [s1, s0]]`` and ``det = det V``;
    ``fitted`` is False (and the rest 0) when the prefix is too short or ``V`` singular.
    """
    if n < min_points:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    start = max(1, n - window + 1)
    last = powers.size - 1
    total = 0.0
    s1 = 0.0
    s2 = 0.0
    t0 = 0.0
    t1 = 0.0
    for s in range(start, n + 1):
        w = powers[min(n - s, last)]
        log_s = math.log(s)
        log_l = logs[offset + s]
        total += w
        s1 += w * log_s
        s2 += w * (log_s * log_s)
        t0 += w * log_l
        t1 += w * (log_s * log_l)
    s0 = total + ridge
    s2 = s2 + ridge
    det = s2 * s0 - s1 * s1
    if det <= 1e-12 * s2 * s0:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    slope = (s0 * t1 - s1 * t0) / det
    intercept = (s2 * t0 - s1 * t1) / det
    squares = 0.0
    for s in range(start, n + 1):
        residual = logs[offset + s] - slope * math.log(s) - intercept
        squares += powers[min(n - s, last)] * (residual * residual)
    variance = squares / max(total - 2.0, 1.0)
    return True, slope, intercept, variance, s0, s1, s2, det


@compiled
def estimate(
    logs: np.ndarray,
    offset: int,
    n: int,
    target: float,
    budget: int,
    powers: np.ndarray,
    window: int,
    ridge: float,
    min_points: int,
    horizon: int,
) -> tuple[float, float]:
    """(remaining batches, P(success within ``budget``)) of one prefix toward ``target``."""
    fitted, slope, intercept, variance, s0, s1, s2, det = fit(
        logs, offset, n, powers, window, ridge, min_points
    )
    if not fitted:
        return math.inf, 0.0
    log_target = math.log(target)
    remaining = math.inf
    if slope < 0.0:  # a flat or rising fit never reaches a lower target
        log_crossing = (log_target - intercept) / slope
        if log_crossing <= math.log(n + horizon + 1):
            crossing = math.ceil(math.exp(log_crossing) - 1e-9)  # first batch count at or past it
            remaining = float(max(crossing - n, 1))  # not reached yet: at least one batch
    if budget <= 0:
        return remaining, 0.0
    x = math.log(n + budget)
    mean = slope * x + intercept
    v00, v01, v11 = s0 / det, -s1 / det, s2 / det  # V⁻¹
    quadratic = (x * v00 + v01) * x + (x * v01 + v11)  # (x, 1) V⁻¹ (x, 1)ᵀ
    spread = math.sqrt(variance * (1.0 + quadratic)) + 1e-12
    return remaining, 0.5 * (1.0 + math.erf((log_target - mean) / (spread * math.sqrt(2.0))))


@compiled
def estimate_prefixes(
    logs: np.ndarray,
    offsets: np.ndarray,
    ends: np.ndarray,
    targets: np.ndarray,
    budgets: np.ndarray,
    powers: np.ndarray,
    window: int,
    ridge: float,
    min_points: int,
    horizon: int,
    remaining: np.ndarray,
    p_success: np.ndarray,
) -> None:
    """`estimate` of prefix i, ``logs[offsets[i] : offsets[i] + ends[i] + 1]``, into row i."""
    for i in range(offsets.size):
        remaining[i], p_success[i] = estimate(
            logs,
            offsets[i],
            ends[i],
            targets[i],
            budgets[i],
            powers,
            window,
            ridge,
            min_points,
            horizon,
        )


@compiled
def estimate_slots(
    ready: np.ndarray,
    lane: np.ndarray,
    slot_ints: np.ndarray,
    slot_floats: np.ndarray,
    table: np.ndarray,
    logs: np.ndarray,
    settings: np.ndarray,
    scales: np.ndarray,
    powers: np.ndarray,
    window: int,
    ridge: float,
    min_points: int,
    horizon: int,
) -> None:
    """Re-estimate the tasks of flat slots ``ready`` from the curve store's ``logs`` (`Lanes`).

    A slot's prefix is its task's losses up to its cursor, at its offset; its budget the batches
    its deadline still allows on the fastest node, ``fastest_batches · (deadline − t)``. Writes what
    `Estimates.record` writes: the raw estimates into ``slot_floats`` and the estimate
    features (remaining / batch scale, at most OBS_BOUND; P(success)) into ``table``.
    """
    k = table.shape[0] // lane.shape[0]
    batches, batch_scale = settings[BATCHES] * settings[SPEEDS:].max(), scales[BATCH_SCALE]
    for r in range(ready.size):
        j = ready[r]
        budget = batches * (slot_ints[DEADLINE, j] - lane[j // k, T])
        left, p = estimate(
            logs,
            slot_ints[OFFSET, j],
            slot_ints[CURSOR, j],
            slot_floats[TARGET, j],
            budget,
            powers,
            window,
            ridge,
            min_points,
            horizon,
        )
        slot_floats[EST_REMAINING, j] = left
        slot_floats[EST_P, j] = p
        table[j, _REMAINING_COL] = min(left / batch_scale, OBS_BOUND)
        table[j, _P_COL] = p
