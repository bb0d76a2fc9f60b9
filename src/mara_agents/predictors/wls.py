"""LARA's remaining-demand estimator: a power law fitted in log–log space by discounted ridge WLS.

Model (LaiRA Eq. 2, 9; design §4, WLS): ``ln L(s) = θ₁ ln s + θ₂`` with ``s`` the batches trained,
fitted over the prefix ``s = 1..n`` by

    θ̂ = argmin_θ  λ‖θ‖² + Σᵢ γ^(n-i) (θ₁ ln sᵢ + θ₂ − ln Lᵢ)²,

whose closed form is ``θ̂ = V⁻¹ Σ γ^(n-i) xᵢ ln Lᵢ`` with ``V = λI + Σ γ^(n-i) xᵢxᵢᵀ`` and
``x = (ln s, 1)``.
The target is crossed at ``s* = exp((ln ε − θ₂) / θ₁)``, so ``R̂ = ⌈s*⌉ − n`` more batches. The
success probability treats the fit's weighted residual spread as Gaussian noise on ``ln L`` at
``s = n + budget`` and returns ``P(ln L ≤ ln ε)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from coreenv import Estimate
from mara_agents.checks import require
from mara_agents.predictors.horizon import HORIZON

__all__ = ["WLSConfig", "WLSFit", "WLSPredictor"]


@dataclass(frozen=True)
class WLSConfig:
    """Settings of the WLS predictor (defaults tuned on ID training runs, docs/benchmark.md)."""

    discount: float = 0.7
    """γ: weight of a point ``k`` batches old is γ^k (recent points matter more)."""
    ridge: float = 0.0
    """λ: ridge penalty on θ (every positive value tried raised the error on ID training runs)."""
    horizon: int = HORIZON
    """H: crossings further than this many batches ahead count as unknown (``inf``)."""
    min_points: int = 3
    """Fewer revealed losses than this gives an unknown estimate."""

    def __post_init__(self) -> None:
        require(self, "in (0, 1]", ("discount",))
        if self.ridge < 0:
            raise ValueError(f"WLSConfig.ridge must be >= 0, got {self.ridge!r}.")
        if self.horizon < 1 or self.min_points < 2:
            raise ValueError(
                f"WLSConfig needs horizon >= 1 and min_points >= 2, got {self.horizon}, "
                f"{self.min_points}."
            )


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


class WLSPredictor:
    """Remaining batches from a loss prefix, by LARA's discounted ridge WLS power-law fit."""

    def __init__(self, config: WLSConfig | None = None) -> None:
        self.config = config or WLSConfig()
        discount = self.config.discount
        self._window = 10**9 if discount == 1.0 else math.ceil(math.log(1e-12) / math.log(discount))
        self._powers = np.ones(0)  # γ^k, k = 0, 1, …, grown on demand

    def fit(self, prefix: np.ndarray) -> WLSFit | None:
        """The power law fitted to a prefix, or None when it cannot be fitted.

        Points whose weight γ^(n−i) is below 1e-12 are left out (they cannot move the fit), so a
        fit costs the same however long the prefix.
        """
        n = len(prefix) - 1
        if n < self.config.min_points:
            return None
        start = max(1, n - self._window + 1)
        log_s = np.log(np.arange(start, n + 1, dtype=np.float64))
        log_l = np.log(np.asarray(prefix[start:], np.float64))
        count = n - start + 1
        if count > len(self._powers):
            self._powers = self.config.discount ** np.arange(2 * count, dtype=np.float64)
        weights = self._powers[:count][::-1]  # γ^(n−i), i = start..n
        ridge = self.config.ridge
        s0 = weights.sum() + ridge
        s1 = weights @ log_s
        s2 = weights @ (log_s * log_s) + ridge
        t0 = weights @ log_l
        t1 = weights @ (log_s * log_l)
        det = s2 * s0 - s1 * s1  # det V, V = [[s2, s1], [s1, s0]] (λI included)
        if det <= 1e-12 * s2 * s0:
            return None
        slope = (s0 * t1 - s1 * t0) / det
        intercept = (s2 * t0 - s1 * t1) / det
        residual = log_l - slope * log_s - intercept
        variance = float(weights @ (residual * residual) / max(weights.sum() - 2.0, 1.0))
        v_inv = np.array([[s0, -s1], [-s1, s2]]) / det
        return WLSFit(float(slope), float(intercept), variance, v_inv)

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """Remaining batches to ``target`` and the probability of reaching it within ``budget``.

        ``inf`` remaining means unknown or beyond the horizon.
        """
        fit = self.fit(prefix)
        if fit is None:
            return Estimate(math.inf, 0.0)
        n = len(prefix) - 1
        return Estimate(self._remaining(fit, n, target), self._p_success(fit, n, target, budget))

    def estimate_batch(
        self, prefixes: list[np.ndarray], targets: np.ndarray, budgets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """`estimate` for several tasks: arrays of remaining batches and success probabilities."""
        pairs = [self.estimate(p, float(e), int(b)) for p, e, b in zip(prefixes, targets, budgets)]
        remaining = np.array([p.remaining for p in pairs], np.float64)
        return remaining, np.array([p.p_success for p in pairs], np.float64)

    def _remaining(self, fit: WLSFit, n: int, target: float) -> float:
        if fit.slope >= 0.0:  # a flat or rising fit never reaches a lower target
            return math.inf
        log_crossing = (math.log(target) - fit.intercept) / fit.slope
        if log_crossing > math.log(n + self.config.horizon + 1):
            return math.inf
        crossing = math.ceil(math.exp(log_crossing) - 1e-9)  # first batch count at or past it
        return float(max(crossing - n, 1))  # the target is not reached yet: at least one batch

    def _p_success(self, fit: WLSFit, n: int, target: float, budget: int) -> float:
        if budget <= 0:
            return 0.0
        x = np.array([math.log(n + budget), 1.0])
        mean = fit.slope * x[0] + fit.intercept
        spread = math.sqrt(fit.variance * (1.0 + float(x @ fit.v_inv @ x))) + 1e-12
        return 0.5 * (1.0 + math.erf((math.log(target) - mean) / (spread * math.sqrt(2.0))))
