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

    validated = True  # positive, finite and falling by construction

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
        size = self.length
        u = rng.random(9)  # every scalar choice at once: one generator call instead of nine
        n = np.arange(size + 1, dtype=np.float64)
        if u[0] < self.plateau_prob:  # progress freezes for `span` batches from `start`
            start = int(size * (0.1 + 0.4 * u[1]))
            span = int(size * (0.05 + 0.15 * u[2]))
            n[start : start + span] = start
            n[start + span :] -= span
        scale = 1.0 + 2.0 * u[3]
        floor = scale * (0.02 + 0.28 * u[4])
        if u[5] < 0.5:
            family = "power"
            shape = (1.0 + n / (5.0 + 45.0 * u[6])) ** -(0.3 + 0.7 * u[7])
        else:
            family = "exponential"
            shape = np.exp(-n / ((0.1 + 0.5 * u[6]) * size))
        sigma = self.noise[0] + (self.noise[1] - self.noise[0]) * u[8]
        noise = np.convolve(rng.random(size + 1) - 0.5, _NOISE_KERNEL, mode="same")
        noise[0] = 0.0  # the initial loss is measured before any update
        return Curve((floor + scale * shape) * np.exp(sigma * noise), family)
