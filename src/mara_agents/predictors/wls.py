"""LARA's remaining-demand estimator: a power law fitted in log–log space by discounted ridge WLS.

Model (LaiRA Eq. 2, 9; design §4, WLS): ``ln L(s) = θ₁ ln s + θ₂`` with ``s`` the batches trained,
fitted over the prefix ``s = 1..n`` by

    θ̂ = argmin_θ  λ‖θ‖² + Σᵢ γ^(n-i) (θ₁ ln sᵢ + θ₂ − ln Lᵢ)²,

whose closed form is ``θ̂ = V⁻¹ Σ γ^(n-i) xᵢ ln Lᵢ`` with ``V = λI + Σ γ^(n-i) xᵢxᵢᵀ`` and
``x = (ln s, 1)``.
The target is crossed at ``s* = exp((ln ε − θ₂) / θ₁)``, so ``R̂ = ⌈s*⌉ − n`` more batches. The
success probability treats the fit's weighted residual spread as Gaussian noise on ``ln L`` at
``s = n + budget`` and returns ``P(ln L ≤ ln ε)``.

The fit is `coreenv.WLSEstimates`'s, compiled (`coreenv.wls_fit`): an environment given a
`WLSPredictor` computes its observed estimates inside its engine, by the same code.
"""

from __future__ import annotations

import numpy as np

from coreenv import Estimate
from coreenv.wls import WLSEstimates, WLSFit

__all__ = ["WLSConfig", "WLSFit", "WLSPredictor"]

WLSConfig = WLSEstimates
"""Settings of the WLS predictor: γ = 0.7, λ = 0, H = 500, 3 points (tuned on ID training runs,
docs/benchmark.md); `coreenv.WLSEstimates`, which holds the fit."""


class WLSPredictor:
    """Remaining batches from a loss prefix, by LARA's discounted ridge WLS power-law fit.

    Attached to an environment, its estimates are computed in the engine (`in_engine`).
    """

    def __init__(self, config: WLSConfig | None = None) -> None:
        self.config = config or WLSConfig()

    @property
    def in_engine(self) -> WLSEstimates:
        """The settings an environment computes this predictor's estimates with, in its engine."""
        return self.config

    def fit(self, prefix: np.ndarray) -> WLSFit | None:
        """The power law fitted to a prefix, or None when it cannot be fitted.

        Points whose weight γ^(n−i) is below 1e-12 are left out (they cannot move the fit), so a
        fit costs the same however long the prefix.
        """
        return self.config.fit(prefix)

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """Remaining batches to ``target`` and the probability of reaching it within ``budget``.

        ``inf`` remaining means unknown or beyond the horizon.
        """
        return self.config.estimate(prefix, target, budget)

    def estimate_batch(
        self, prefixes: list[np.ndarray], targets: np.ndarray, budgets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """`estimate` for several tasks: arrays of remaining batches and success probabilities."""
        return self.config.estimate_batch(prefixes, targets, budgets)
