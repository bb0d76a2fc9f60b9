"""`WLSEstimates`: LARA's power-law estimator, computed by the engine itself when attached.

Attached as an environment's predictor (``CoreEnv(predictor=WLSEstimates())``, `BatchedCore`,
the vector and sequential forms), its estimates are written by one compiled call per step for
every lane (`coreenv.wls_fit.estimate_slots`, reading the curve store's logs): no Python
runs per task. Elsewhere it is a `coreenv.Predictor` like any other, by the same compiled fit.
An object whose ``in_engine`` attribute is a `WLSEstimates` is computed in the engine the same
way (`mara_agents.predictors.WLSPredictor` is one): the simulator calls `estimate_slots`
(`coreenv.core.estimates.InEngine`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from coreenv.checks import is_int, is_number
from coreenv import wls_fit
from coreenv.core.lanes import Lanes
from coreenv.predictor import Estimate

__all__ = ["WLSEstimates", "WLSFit"]


@dataclass(frozen=True, slots=True)
class WLSFit:
    """A fitted power law ``ln L = slope · ln s + intercept`` and its uncertainty."""

    slope: float
    """θ₁ (negative for a falling curve)."""
    intercept: float
    """θ₂."""
    variance: float
    """Weighted residual variance of ``ln L`` around the fit."""
    v_inv: np.ndarray
    """(2, 2) V⁻¹, the inverse of the regularised weighted design matrix (x = (ln s, 1))."""


@dataclass(frozen=True)
class WLSEstimates:
    """LARA's discounted ridge WLS power-law fit (`coreenv.wls_fit`) as a predictor.

    Defaults tuned on ID training runs. `estimate` and `estimate_batch` take loss prefixes
    (``prefix[0]`` the initial loss); attached to an environment, the engine computes the same
    fit from its curve store in one compiled call per step.
    """

    discount: float = 0.7
    """γ in (0, 1]: weight of a point ``k`` batches old is γ^k (recent points matter more)."""
    ridge: float = 0.0
    """λ >= 0: ridge penalty on θ."""
    horizon: int = 500
    """H >= 1: crossings further than this many batches ahead count as unknown (``inf``)."""
    min_points: int = 3
    """Fewer revealed losses than this (>= 2) gives an unknown estimate."""

    def __post_init__(self) -> None:
        rules = (
            ("discount", is_number(self.discount) and 0.0 < self.discount <= 1.0, "in (0, 1]"),
            ("ridge", is_number(self.ridge) and self.ridge >= 0.0, "a number >= 0"),
            ("horizon", is_int(self.horizon) and self.horizon >= 1, "an int >= 1"),
            ("min_points", is_int(self.min_points) and self.min_points >= 2, "an int >= 2"),
        )
        for name, valid, rule in rules:
            if not valid:
                value = getattr(self, name)
                raise ValueError(f"WLSEstimates.{name} must be {rule}, got {value!r}.")

    @property
    def in_engine(self) -> WLSEstimates:
        """Itself: what an environment computes in its engine (`estimate_slots`)."""
        return self

    def estimate_slots(self, ready: np.ndarray, lanes: Lanes, logs: np.ndarray) -> None:
        """Write the estimates of the flat slots ``ready`` of ``lanes`` in one compiled call.

        ``logs``: the curve store's log-losses (`wls_fit.estimate_slots`).
        """
        arrays = (lanes.lane, lanes.slot_ints, lanes.slot_floats, lanes.table, logs)
        wls_fit.estimate_slots(ready, *arrays, lanes.settings, lanes.scales, *self.settings())

    def settings(self) -> tuple[np.ndarray, int, float, int, int]:
        """The trailing arguments of the `wls_fit` functions: powers, window, λ, min points, H.

        ``powers`` are γ^k for k below the window (``[1.0]`` for γ = 1), the window how many of
        the latest points a fit reads (older ones weigh below 1e-12).
        """
        return self._settings

    @cached_property
    def _settings(self) -> tuple[np.ndarray, int, float, int, int]:
        if self.discount == 1.0:
            window, powers = 10**9, np.ones(1)
        else:
            window = math.ceil(math.log(1e-12) / math.log(self.discount))
            powers = self.discount ** np.arange(window, dtype=np.float64)
        return powers, window, float(self.ridge), int(self.min_points), int(self.horizon)

    def fit(self, prefix: np.ndarray) -> WLSFit | None:
        """The power law fitted to a loss prefix, or None when it cannot be fitted."""
        logs = np.log(np.asarray(prefix, np.float64))
        fitted, slope, intercept, variance, s0, s1, s2, det = wls_fit.fit(
            logs, 0, len(logs) - 1, *self.settings()[:4]
        )
        if not fitted:
            return None
        v_inv = np.array([[s0, -s1], [-s1, s2]]) / det
        return WLSFit(float(slope), float(intercept), float(variance), v_inv)

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """Remaining batches to ``target`` and the probability of reaching it within ``budget``.

        ``inf`` remaining means unknown or beyond the horizon.
        """
        remaining, p_success = self.estimate_batch([prefix], np.array([target]), np.array([budget]))
        return Estimate(float(remaining[0]), float(p_success[0]))

    def estimate_batch(
        self, prefixes: list[np.ndarray], targets: np.ndarray, budgets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """`estimate` of several tasks in one compiled call: remaining batches, P(success)."""
        targets, budgets = np.asarray(targets, np.float64), np.asarray(budgets).astype(np.int64)
        if targets.shape != (len(prefixes),) or budgets.shape != (len(prefixes),):
            raise ValueError(
                f"WLSEstimates.estimate_batch needs one target and one budget per prefix, got "
                f"{len(prefixes)} prefixes, targets of shape {targets.shape} and budgets of "
                f"shape {budgets.shape}."
            )
        lengths = np.array([len(prefix) for prefix in prefixes], np.int64)
        offsets = np.cumsum(lengths) - lengths
        values = [np.asarray(prefix, np.float64) for prefix in prefixes]
        logs = np.log(np.concatenate(values)) if values else np.zeros(0)
        remaining, p_success = np.empty(len(prefixes)), np.empty(len(prefixes))
        wls_fit.estimate_prefixes(
            logs,
            offsets,
            lengths - 1,
            targets,
            budgets,
            *self.settings(),
            remaining,
            p_success,
        )
        return remaining, p_success

