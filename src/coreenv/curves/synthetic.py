"""Synthetic loss curves: power laws and exponentials with plateaus and correlated noise.

Fast, dependency-free curves for tests and for trying the environment before the recorded bank
is installed. Every random choice goes through the generator passed to `sample`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coreenv.curves.source import Curve, CurveSource

__all__ = ["SyntheticCurves"]

# Noise: a moving sum of 8 centred uniforms (unit variance, close to Gaussian, correlated over ~8
# batches); uniforms are several times cheaper to draw than normals.
_NOISE_KERNEL = np.full(8, np.sqrt(12.0 / 8.0))


@dataclass(frozen=True)
class SyntheticCurves(CurveSource):
    """Parametric curves ``L(n) = c + a·f(n)`` with ``f`` a power law or an exponential.

    Attributes:
        length: batches per curve (the curve has ``length + 1`` losses).
        noise: range of the multiplicative log-noise scale.
        plateau_prob: chance that a curve stalls for a while (progress frozen) before resuming.
    """

    validated = True  # checked on load / valid by construction

    length: int = 700
    noise: tuple[float, float] = (0.005, 0.03)
    plateau_prob: float = 0.3
    name: str = "synthetic"

    @property
    def families(self) -> tuple[str, ...]:
        """The two shapes this source draws."""
        return ("power", "exponential")

    def sample(self, rng: np.random.Generator) -> Curve:
        """Draw one curve; all randomness from ``rng``."""
        n = np.arange(self.length + 1, dtype=np.float64)
        if rng.random() < self.plateau_prob:
            start = rng.integers(self.length // 10, self.length // 2)
            span = rng.integers(self.length // 20, self.length // 5)
            n = n - np.clip(n - start, 0, span)  # progress frozen for `span` batches
        scale = rng.uniform(1.0, 3.0)
        floor = scale * rng.uniform(0.02, 0.3)
        if rng.random() < 0.5:
            family = "power"
            shape = (1.0 + n / rng.uniform(5.0, 50.0)) ** -rng.uniform(0.3, 1.0)
        else:
            family = "exponential"
            shape = np.exp(-n / (rng.uniform(0.1, 0.6) * self.length))
        noise = np.convolve(rng.random(n.size) - 0.5, _NOISE_KERNEL, mode="same")
        noise[0] = 0.0  # the initial loss is measured before any update
        losses = (floor + scale * shape) * np.exp(rng.uniform(*self.noise) * noise)
        return Curve(losses, family)
