"""Fitting a `Calibration` on out-of-family predictions: the choices it makes and how.

A fold model's predictions on the family (or kind) it never saw (`OutOfFamily`, gathered by
`coreenv_lab.fm_training.folds`) show how the predictor errs on something new; `fit_calibration`
chooses the reading of the samples, the quantile level and the WLS weight whose capped MAE over
WLS's is lowest on the worst family, and maps the success share to ``p_success``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mara_agents.predictors.calibration import (
    RAW,
    Calibration,
    blend,
    point_estimates,
    reach_bands,
    success_features,
)
from mara_agents.predictors.horizon import HORIZON

__all__ = [
    "BACKTESTS",
    "LEVELS",
    "READINGS",
    "REACH_EDGES",
    "WLS_WEIGHTS",
    "OutOfFamily",
    "capped_errors",
    "family_ratios",
    "fit_calibration",
]

LEVELS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
"""Quantile levels of the sampled crossings `fit_calibration` chooses from."""
WLS_WEIGHTS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6)
"""Weights of the WLS estimate in the blend `fit_calibration` chooses from (0: FM alone)."""
REACH_EDGES = (50.0, 200.0)
"""Median sampled crossings (batches) from which `fit_calibration` can let the blend change (when
asked: ``reach_edges``): a target the samples reach soon, later or late (or not within H) is
read at a level and weight of its own (`Calibration.farther`), since FM and WLS err differently
on near and far targets."""
BACKTESTS = (0.5, 1.0)
"""Strengths of the revealed-progress check `fit_calibration` may choose besides 0 (off)."""
READINGS = tuple(
    (denoise, strength)
    for denoise in (False, True)
    for strength in (0.0, *BACKTESTS)
    if denoise or strength > 0
)
"""The readings of the sampled futures `fit_calibration` may choose besides the raw one: each a
(denoise, revealed-progress strength) pair."""


@dataclass(frozen=True)
class OutOfFamily:
    """Predictions of fold models on the family each never saw, with the truth."""

    family: np.ndarray  # (N,) the held-out family (or kind) of each query
    crossings: np.ndarray  # (N, S) the fold model's sampled crossings (inf: never within H)
    wls: np.ndarray  # (N,) the WLS estimate (inf: never within H)
    budgets: np.ndarray  # (N,)
    remaining: np.ndarray  # (N,) true remaining batches
    readings: np.ndarray | None = None
    """(N, len(READINGS), S) the crossings of the futures under each other reading of
    `READINGS` (None: the raw reading is the only choice of the fit)."""
    tasks: np.ndarray | None = None
    """(N, `TASK_FEATURES`) each task's own description (None: zeros)."""

    @property
    def share(self) -> np.ndarray:
        """(N,) sampled success share: the raw crossings within the budget."""
        return self.share_at(RAW)

    def share_at(self, reading: tuple[bool, float]) -> np.ndarray:
        """(N,) sampled success share under ``reading`` (a pair of `READINGS`, or the raw one)."""
        return np.mean(self.crossings_at(reading) <= self.budgets[:, None], axis=1)

    def crossings_at(self, reading: tuple[bool, float]) -> np.ndarray:
        """(N, S) the crossings under ``reading``; ``(False, 0.0)`` is the raw one."""
        if reading == RAW:
            return self.crossings
        return self.readings[:, READINGS.index(reading)]

    @property
    def success(self) -> np.ndarray:
        """(N,) whether each task reaches its target within its budget."""
        return self.remaining <= self.budgets


def capped_errors(
    estimate: np.ndarray, remaining: np.ndarray, horizon: int = HORIZON
) -> np.ndarray:
    """(B,) |min(R̂, H) − min(R* − n, H)|: each query's term of the capped MAE."""
    return np.abs(np.minimum(estimate, horizon) - np.minimum(remaining, horizon))


def family_ratios(
    data: OutOfFamily, calibration: Calibration, horizon: int = HORIZON
) -> dict[str, float]:
    """Capped MAE of ``calibration``'s remaining batches over WLS's, per family of ``data``."""
    reading = (calibration.denoise, calibration.backtest)
    estimate = calibration.remaining(data.crossings_at(reading), data.wls, horizon)
    error = capped_errors(estimate, data.remaining, horizon)
    wls_error = capped_errors(data.wls, data.remaining, horizon)
    return {
        str(f): float(error[data.family == f].mean() / wls_error[data.family == f].mean())
        for f in np.unique(data.family)
    }


def fit_calibration(
    data: OutOfFamily, horizon: int = HORIZON, reach_edges: tuple[float, ...] = ()
) -> Calibration:
    """Fit a `Calibration` on out-of-family (or out-of-kind) queries.

    The reading of the samples (raw, or one of `READINGS` when ``data`` has their crossings),
    the level of `LEVELS` and the weight of `WLS_WEIGHTS` are the ones whose capped MAE, relative
    to WLS's, is lowest on the worst family (``data.family``: a held-out family or kind, under
    one query protocol): the target is to beat WLS on every new family, not on average. With
    ``reach_edges`` (such as `REACH_EDGES`), each band of them then gets its own level and weight
    (`Calibration.farther`), by coordinate descent on the same worst ratio (the shipped predictor
    has none: docs/predictors.md, *Leave one kind out*). ``p_success`` is a logistic regression of
    success on the `success_features` of the chosen reading, mapped through the isotonic
    regression of success on its score.
    """
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    if len(data.remaining) < 2:
        raise ValueError(f"fit_calibration needs at least 2 queries, got {len(data.remaining)}.")
    wls_error = capped_errors(data.wls, data.remaining, horizon)
    families = np.unique(data.family)
    readings = (RAW,) if data.readings is None else (RAW, *READINGS)
    estimates = {
        (reading, level): point_estimates(data.crossings_at(reading), level)
        for reading in readings
        for level in LEVELS
    }

    def worst_ratio(reading: tuple[bool, float], level: float, weight: float) -> float:
        estimate = blend(estimates[(reading, level)], data.wls, weight, horizon)
        error = capped_errors(estimate, data.remaining, horizon)
        return max(
            error[data.family == f].mean() / wls_error[data.family == f].mean() for f in families
        )

    reading, level, weight = min(
        ((r, level, weight) for r in readings for level in LEVELS for weight in WLS_WEIGHTS),
        key=lambda choice: worst_ratio(*choice),
    )
    features = success_features(
        data.crossings_at(reading), data.budgets, data.wls, data.tasks, horizon
    )
    success = data.success.astype(int)
    if success.min() == success.max():
        raise ValueError("fit_calibration needs queries that succeed and queries that fail.")
    logistic = LogisticRegression(C=100.0, max_iter=1000).fit(features, success)
    coefficients = np.concatenate([logistic.intercept_, logistic.coef_[0]])
    scores = logistic.predict_proba(features)[:, 1]
    isotonic = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(scores, success)
    knots = np.unique(np.concatenate([[0.0], isotonic.X_thresholds_, [1.0]]))
    values = np.clip(isotonic.predict(knots), 0.0, 1.0)
    farther = ()
    if reach_edges:
        crossings = data.crossings_at(reading)
        bands = _band_blends(data, crossings, (level, weight), reach_edges, horizon)
        (level, weight), farther = bands[0], tuple(zip(reach_edges, *zip(*bands[1:])))
    denoise, strength = reading
    return Calibration(knots, values, level, weight, strength, denoise, coefficients, farther)


def _band_blends(
    data: OutOfFamily,
    crossings: np.ndarray,
    start: tuple[float, float],
    edges: tuple[float, ...],
    horizon: int = HORIZON,
    sweeps: int = 3,
) -> list[tuple[float, float]]:
    """A (level, weight) per band of ``edges``, lowering the worst family's MAE over WLS's.

    Coordinate descent from ``start`` in every band: each band in turn takes the pair of
    `LEVELS` × `WLS_WEIGHTS` that makes the worst family's ratio lowest, the others held. A band
    without queries keeps ``start``.
    """
    families, family = np.unique(data.family, return_inverse=True)
    wls_errors = np.bincount(family, capped_errors(data.wls, data.remaining, horizon))
    band = reach_bands(crossings, edges, horizon)
    errors = {}
    for level in LEVELS:
        estimate = point_estimates(crossings, level)
        for weight in WLS_WEIGHTS:
            mixed = blend(estimate, data.wls, weight, horizon)
            errors[(level, weight)] = capped_errors(mixed, data.remaining, horizon)

    def worst(choice: list[tuple[float, float]]) -> float:
        error = np.choose(band, [errors[pair] for pair in choice])
        return float((np.bincount(family, error, len(families)) / wls_errors).max())

    choice = [start] * (len(edges) + 1)
    for _ in range(sweeps):
        for index in np.unique(band):
            choice[index] = min(
                errors, key=lambda pair: worst([*choice[:index], pair, *choice[index + 1 :]])
            )
    return choice
