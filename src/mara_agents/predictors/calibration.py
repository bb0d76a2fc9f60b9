"""Reading sampled futures on new kinds of curve: a calibrated ``p_success`` and a blended estimate.

The flow-matching predictor errs in one direction on families it never saw: tasks it gives a
success share of 5% succeed more often than not, and its remaining batches err where LARA's
power-law fit (WLS) errs the other way. So the shipped predictor reads its samples through a
`Calibration`: a reading of the futures (raw or denoised through the network's `FutureBasis`,
rescaled or not by the revealed-progress check), an isotonic (monotone, piecewise-linear) map of
the success share, and, as remaining batches, a geometric blend of a quantile of the sampled
crossings and the WLS estimate (where WLS has one). This module reads a calibration; it is fitted
(`mara_agents.fm_training.calibration_fit`) by cross-fitting on held-out folds
(`coreenv_lab.fm_training.folds`): each fold's model predicts the *training* runs of the family
or kind it never saw, so the fit shows how the predictor errs on something new, and no test run
is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mara_agents.predictors.horizon import HORIZON

__all__ = [
    "FEATURES",
    "RAW",
    "TASK_FEATURES",
    "Calibration",
    "blend",
    "point_estimates",
    "reach_bands",
    "success_features",
]

RAW = (False, 0.0)
"""The raw reading: the sampled futures as the network gives them."""


@dataclass(frozen=True)
class Calibration:
    """How to read a task's sampled crossings: ``p_success``, and the remaining batches' blend.

    ``p_success`` is the isotonic map given by ``knots`` and ``values`` (monotone,
    piecewise-linear) of a score: the logistic regression of `success_features` when
    ``coefficients`` are given (what `mara_agents.fm_training.calibration_fit` fits), else the
    sampled success share (calibrations stored without ``coefficients``).
    """

    knots: np.ndarray  # (J,) increasing scores, knots[0] = 0, knots[-1] = 1
    values: np.ndarray  # (J,) calibrated probabilities at the knots, non-decreasing in [0, 1]
    level: float = 0.5  # the quantile of the sampled crossings that enters the blend
    wls_weight: float = 0.0  # the WLS estimate's weight in the (geometric) blend
    backtest: float = 0.0  # strength of the revealed-progress check (0: off)
    denoise: bool = False  # read the futures through the network's `FutureBasis`
    coefficients: np.ndarray | None = None  # (1 + FEATURES,) intercept and weights of the map
    farther: tuple[tuple[float, float, float], ...] = ()
    """Blends of farther targets, as (reach, level, wls_weight) with increasing reach: a task
    whose median sampled crossing is at least ``reach`` batches (the last such entry) is read at
    that level and weight instead of ``level`` and ``wls_weight`` (empty: one blend for all)."""

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
        farther = tuple(tuple(float(x) for x in band) for band in self.farther)
        reaches = [band[0] if len(band) == 3 else np.nan for band in farther]
        if not np.all(np.isfinite(reaches)) or np.any(np.diff([0.0, *reaches]) <= 0):
            raise ValueError(
                "Calibration.farther must hold (reach, level, wls_weight) triples with finite, "
                f"positive, increasing reaches, got {self.farther!r}."
            )
        blends = [("Calibration.level", "Calibration.wls_weight", self.level, self.wls_weight)]
        blends += [
            (f"Calibration.farther[{i}]'s level", f"Calibration.farther[{i}]'s wls_weight", *b[1:])
            for i, b in enumerate(farther)
        ]
        for level_name, weight_name, level, weight in blends:
            if not 0.0 < level < 1.0:
                raise ValueError(f"{level_name} must be in (0, 1), got {level!r}.")
            if not 0.0 <= weight < 1.0:
                raise ValueError(f"{weight_name} must be in [0, 1), got {weight!r}.")
        object.__setattr__(self, "farther", farther)
        if not 0.0 <= self.backtest <= 2.0:
            raise ValueError(f"Calibration.backtest must be in [0, 2], got {self.backtest!r}.")
        if self.coefficients is not None:
            coefficients = np.asarray(self.coefficients, np.float64)
            if coefficients.shape != (1 + FEATURES,) or not np.all(np.isfinite(coefficients)):
                raise ValueError(
                    f"Calibration.coefficients must be {1 + FEATURES} finite numbers, got "
                    f"{self.coefficients!r}."
                )
            object.__setattr__(self, "coefficients", coefficients)
        object.__setattr__(self, "knots", knots)
        object.__setattr__(self, "values", values)

    @property
    def reads_wls(self) -> bool:
        """Whether the WLS estimate enters: in a blend, or in ``p_success``'s features."""
        weights = [self.wls_weight, *(weight for _, _, weight in self.farther)]
        return max(weights) > 0 or self.coefficients is not None

    def p_success(
        self,
        crossings: np.ndarray,
        budgets: np.ndarray,
        wls: np.ndarray,
        tasks: np.ndarray | None = None,
        horizon: int = HORIZON,
    ) -> np.ndarray:
        """(B,) calibrated probabilities from sampled crossings (B, S), budgets, WLS estimates."""
        score = self.score(crossings, budgets, wls, tasks, horizon)
        return np.interp(score, self.knots, self.values)

    def score(
        self,
        crossings: np.ndarray,
        budgets: np.ndarray,
        wls: np.ndarray,
        tasks: np.ndarray | None = None,
        horizon: int = HORIZON,
    ) -> np.ndarray:
        """(B,) what the isotonic map reads: the logistic score, or the sampled success share."""
        if self.coefficients is None:
            return np.mean(crossings <= np.asarray(budgets)[:, None], axis=1)
        features = success_features(crossings, budgets, wls, tasks, horizon)
        return 1.0 / (1.0 + np.exp(-(self.coefficients[0] + features @ self.coefficients[1:])))

    def remaining(
        self, crossings: np.ndarray, wls: np.ndarray, horizon: int = HORIZON
    ) -> np.ndarray:
        """(B,) remaining batches from sampled crossings (B, S) and WLS estimates (B,)."""
        band = reach_bands(crossings, [reach for reach, _, _ in self.farther], horizon)
        estimate = np.empty(len(crossings))
        for index, (_, level, weight) in enumerate(
            ((0.0, self.level, self.wls_weight), *self.farther)
        ):
            rows = band == index
            if rows.any():
                estimate[rows] = blend(
                    point_estimates(crossings[rows], level), wls[rows], weight, horizon
                )
        return estimate


TASK_FEATURES = 3
"""Columns of a task's own description (`mara_agents.predictors.flow.task_features`): how far
below the best loss so far its target lies, its prefix's noise, its prefix's length."""
FEATURES = 4 + TASK_FEATURES
"""Columns of `success_features`."""


def success_features(
    crossings: np.ndarray,
    budgets: np.ndarray,
    wls: np.ndarray,
    tasks: np.ndarray | None = None,
    horizon: int = HORIZON,
) -> np.ndarray:
    """(B, `FEATURES`) what the logistic ``p_success`` reads of a task.

    The logit of the sampled success share (counted with half a sample each way, so it stays
    finite), the log of the budget, of the median sampled crossing and of the WLS estimate
    (each capped just past H), then the task's own `TASK_FEATURES` columns (zeros if None). The
    share alone does not say how far a target is: a near target with a small budget and a far one
    with a large budget can share it and succeed at different rates.
    """
    samples = crossings.shape[1]
    budgets = np.asarray(budgets, np.float64)
    share = (np.sum(crossings <= budgets[:, None], axis=1) + 0.5) / (samples + 1.0)
    cap = horizon + 1.0
    return np.column_stack(
        [
            np.log(share / (1.0 - share)),
            np.log1p(budgets),
            np.log1p(np.minimum(np.median(crossings, axis=1), cap)),
            np.log1p(np.minimum(wls, cap)),
            np.zeros((len(budgets), TASK_FEATURES)) if tasks is None else tasks,
        ]
    )


def reach_bands(
    crossings: np.ndarray, edges: Sequence[float], horizon: int = HORIZON
) -> np.ndarray:
    """(B,) each task's band: how many of the increasing ``edges`` its median crossing reaches.

    The median of the (B, S) sampled crossings, capped just past H (``inf``: never within H).
    """
    reach = np.minimum(np.median(crossings, axis=1), horizon + 1.0)
    return np.searchsorted(np.asarray(edges, np.float64), reach, side="right")


def point_estimates(crossings: np.ndarray, level: float) -> np.ndarray:
    """(B,) the ``level`` quantile of each task's (B, S) sampled crossings.

    Each is one of the samples (the inverted empirical CDF): never between a crossing and ``inf``.
    """
    return np.quantile(crossings, level, axis=1, method="inverted_cdf")


def blend(fm: np.ndarray, wls: np.ndarray, wls_weight: float, horizon: int = HORIZON) -> np.ndarray:
    """``fm^(1 − w) · wls^w``; ``fm`` alone where WLS sees no crossing within H.

    A flat or rising WLS fit carries no estimate, so it does not enter. FM's ``inf`` counts as
    just past H; a blend past H is ``inf``.
    """
    weight = np.where(np.isfinite(wls), wls_weight, 0.0)
    fm = np.minimum(fm, horizon + 1.0)
    mixed = np.exp((1.0 - weight) * np.log(fm) + weight * np.log(np.where(weight > 0, wls, 1.0)))
    return np.where(mixed > horizon, np.inf, mixed)

