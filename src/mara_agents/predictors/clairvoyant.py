"""A predictor that knows the recorded curves: the true remaining demand, for diagnostics only.

It looks a prefix up among the bank's runs and answers with ``R* − n`` and whether that fits the
budget. LARA with it separates LARA's allocation rule from the error of its WLS estimates.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from coreenv import Estimate
from coreenv.curves import CurveBank, demand_of

__all__ = ["ClairvoyantPredictor"]

_KEY = 4  # losses identifying a run (every run has its own seed, so they differ from the start)


class ClairvoyantPredictor:
    """True remaining batches of prefixes of ``bank``'s runs (KeyError for any other prefix)."""

    def __init__(self, bank: CurveBank) -> None:
        self.bank = bank
        self._rows: dict[bytes, list[int]] = defaultdict(list)
        for row in range(len(bank)):
            self._rows[self._key(bank.curve(row).losses)].append(row)

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """``R* − n`` of the run this prefix belongs to, and 1 if it fits the budget else 0."""
        curve = self._curve(prefix)
        remaining = demand_of(curve, target) - (len(prefix) - 1)
        return Estimate(float(remaining), float(remaining <= budget))

    def _curve(self, prefix: np.ndarray) -> np.ndarray:
        for row in self._rows.get(self._key(prefix), []):
            losses = self.bank.curve(row).losses
            if np.array_equal(losses[: len(prefix)], prefix):
                return losses
        raise KeyError("this prefix is not the start of any run of the bank.")

    @staticmethod
    def _key(losses: np.ndarray) -> bytes:
        return np.ascontiguousarray(losses[:_KEY], np.float64).tobytes()
