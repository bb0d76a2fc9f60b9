"""Denoising sampled futures: keep their shape, and only as much batch-to-batch noise as the prefix.

A few integration steps from noise leave independent noise at every grid point of a sampled
future (about 0.12 nats with 4 Heun steps, on smooth and noisy curves alike), so a target a few
per cent below a smooth, flat curve is "reached" at the first sampled wiggle. A `FutureBasis`
holds the principal components of the training futures: a sampled future is projected on them
(its shape), and its residual is kept only up to the prefix's own noise level
(`mara_agents.predictors.flow.noise_level`): a noisy training loss keeps its noise, a smooth
validation loss loses the sampler's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["COMPONENTS", "DENSE", "FutureBasis", "fit_basis"]

COMPONENTS = 8
"""Principal components kept (the trend shapes; about 83% of the variance of the corpus's
futures, the rest being mostly minibatch noise)."""
DENSE = 16
"""The first grid points, one batch apart: where the residual noise is measured per batch."""


@dataclass(frozen=True)
class FutureBasis:
    """The mean and leading principal components of training futures."""

    mean: np.ndarray  # (G,)
    components: np.ndarray  # (G, K), orthonormal columns

    def __post_init__(self) -> None:
        if self.mean.ndim != 1 or self.components.shape[0] != self.mean.shape[0]:
            raise ValueError(
                f"FutureBasis needs a (G,) mean and (G, K) components, got shapes "
                f"{self.mean.shape} and {self.components.shape}."
            )

    def denoise(self, futures: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """(B, S, G) futures projected on the basis plus their residual scaled down to ``noise``.

        ``noise`` (B,) is each prefix's per-batch noise of the log-loss; a residual whose
        per-batch size over the first `DENSE` grid points is already below it is kept whole.
        """
        centred = futures - self.mean
        smooth = centred @ self.components @ self.components.T + self.mean
        residual = futures - smooth
        size = np.sqrt(np.mean(residual[:, :, :DENSE] ** 2, axis=(1, 2)))  # (B,)
        scale = np.minimum(1.0, noise / np.maximum(size, 1e-12))
        return (smooth + scale[:, None, None] * residual).astype(futures.dtype)


def fit_basis(futures: np.ndarray, components: int = COMPONENTS) -> FutureBasis:
    """The basis of ``futures`` (N, G): their mean and ``components`` leading principal axes."""
    if futures.ndim != 2 or not 1 <= components <= futures.shape[1]:
        raise ValueError(
            f"fit_basis needs (N, G) futures and 1 <= components <= G, got shape "
            f"{futures.shape} and components={components}."
        )
    data = futures.astype(np.float64)
    mean = data.mean(axis=0)
    _, _, axes = np.linalg.svd(data - mean, full_matrices=False)
    return FutureBasis(mean.astype(np.float32), axes[:components].T.astype(np.float32))
