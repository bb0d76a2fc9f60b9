"""The base of predictors that answer in batches: one task is a batch of one."""

from __future__ import annotations

import numpy as np

from coreenv import Estimate

__all__ = ["BatchPredictor"]


class BatchPredictor:
    """A `coreenv.Predictor` whose ``estimate`` is its ``estimate_batch`` of one task."""

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """`coreenv.Predictor.estimate` for one task."""
        remaining, p_success = self.estimate_batch([prefix], np.array([target]), np.array([budget]))
        return Estimate(float(remaining[0]), float(p_success[0]))

    def estimate_batch(
        self, prefixes: list[np.ndarray], targets: np.ndarray, budgets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Remaining batches and success probabilities of several tasks."""
        raise NotImplementedError
