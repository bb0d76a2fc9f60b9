"""Reading sampled futures on new families: a calibrated ``p_success`` and a point-estimate level.

The flow-matching predictor errs in one direction on families it never saw: tasks it gives a
success share of 5% succeed more often than not, and some futures it samples never reach the
target while the task does. So the shipped predictor reads its samples through a `Calibration`:
its success share goes through an isotonic (monotone, piecewise-linear) map, and the remaining
batches are a lower quantile of the sampled crossings instead of the median. Both are fitted by
cross-fitting on the leave-one-family-out folds (`mara_agents.predictors.lofo`): each fold's model
predicts the *training* runs of the family it never saw, so the fit shows how the predictor errs
on a new family, and no test run is read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mara_agents.predictors.horizon import HORIZON

__all__ = ["LEVELS", "Calibration", "fit_calibration", "point_estimates"]

LEVELS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
"""Quantile levels `fit_calibration` chooses the point estimate from."""


@dataclass(frozen=True)
class Calibration:
    """How to read a task's sampled crossings: a map of the success share, a quantile level."""

    knots: np.ndarray  # (J,) increasing success shares, knots[0] = 0, knots[-1] = 1
    values: np.ndarray  # (J,) calibrated probabilities at the knots, non-decreasing in [0, 1]
    level: float = 0.5  # the quantile of the sampled crossings read as remaining batches

    def __post_init__(self) -> None:
        knots, values = np.asarray(self.knots, np.float64), np.asarray(self.values, np.float64)
        if (
            knots.ndim != 1
            or knots.shape != values.shape
            or len(knots) < 2
            or knots[0] != 0.0
            or knots[-1] != 1.0
            or np.any(np.diff(knots) <= 0)
            or np.any(np.diff(values) < 0)
            or np.any((values < 0) | (values > 1))
        ):
            raise ValueError(
                "Calibration needs increasing knots from 0 to 1 and non-decreasing values in "
                f"[0, 1] of the same length, got knots={self.knots!r}, values={self.values!r}."
            )
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"Calibration.level must be in (0, 1), got {self.level!r}.")
        object.__setattr__(self, "knots", knots)
        object.__setattr__(self, "values", values)

    def p_success(self, share: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of the success shares ``share``."""
        return np.interp(share, self.knots, self.values)


def point_estimates(crossings: np.ndarray, level: float) -> np.ndarray:
    """(B,) the ``level`` quantile of each task's (B, S) sampled crossings.

    Each is one of the samples (the inverted empirical CDF): never between a crossing and ``inf``.
    """
    return np.quantile(crossings, level, axis=1, method="inverted_cdf")


def fit_calibration(
    shares: np.ndarray,
    outcomes: np.ndarray,
    crossings: np.ndarray,
    remaining: np.ndarray,
    horizon: int = HORIZON,
) -> Calibration:
    """Fit a `Calibration` on out-of-family queries.

    Args:
        shares: (N,) sampled success shares (crossings within the budget).
        outcomes: (N,) whether each task succeeded within its budget.
        crossings: (N, S) sampled crossings (``inf``: never within the horizon).
        remaining: (N,) true remaining batches.
        horizon: H, the cap of the capped MAE the level minimises.

    The map is the isotonic regression of the outcomes on the shares; the level is the one of
    `LEVELS` whose point estimates have the lowest capped MAE.
    """
    from sklearn.isotonic import IsotonicRegression

    shares = np.asarray(shares, np.float64)
    outcomes = np.asarray(outcomes, np.float64)
    if shares.shape != outcomes.shape or shares.ndim != 1 or len(shares) < 2:
        raise ValueError(
            f"fit_calibration needs as many outcomes as shares (at least 2), got shapes "
            f"{shares.shape} and {outcomes.shape}."
        )
    if crossings.shape[0] != len(shares) or remaining.shape != shares.shape:
        raise ValueError(
            f"fit_calibration needs one row of crossings and one remaining per share, got "
            f"{crossings.shape} and {remaining.shape} for {len(shares)} shares."
        )
    isotonic = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    isotonic.fit(shares, outcomes)
    knots = np.unique(np.concatenate([[0.0], isotonic.X_thresholds_, [1.0]]))
    values = np.clip(isotonic.predict(knots), 0.0, 1.0)
    truth = np.minimum(remaining, horizon)
    errors = [
        np.mean(np.abs(np.minimum(point_estimates(crossings, level), horizon) - truth))
        for level in LEVELS
    ]
    return Calibration(knots, values, LEVELS[int(np.argmin(errors))])
