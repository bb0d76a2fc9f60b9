"""A predictor that knows the recorded curves: the true remaining demand, for diagnostics only.

It looks a prefix up among the bank's runs and answers with ``R* − n`` and whether that fits the
budget. LARA with it separates LARA's allocation rule from the error of its WLS estimates, and
`ErrorLog` scores another predictor's answers against it as a scheduler plays
(`studies/value_of_information/value_of_information.py`).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from coreenv import Estimate, Predictor, estimate_many
from coreenv.curves import CurveBank, demand_of
from mara_agents.predictors.batched import BatchPredictor

__all__ = ["ClairvoyantPredictor", "ErrorLog"]

_KEY = 4  # losses that narrow the search to the runs starting the same way


class ClairvoyantPredictor:
    """True remaining batches of prefixes of ``bank``'s runs.

    A prefix that starts no run, or that starts several runs which reach the target at different
    batches (runs of one setting can share their first hundreds of losses), has no one answer:
    KeyError.
    """

    def __init__(self, bank: CurveBank) -> None:
        self.bank = bank
        self._rows: dict[bytes, list[int]] = defaultdict(list)
        for row in range(len(bank)):
            self._rows[self._key(bank.curve(row).losses)].append(row)

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """``R* − n`` of the run this prefix belongs to, and 1 if it fits the budget else 0."""
        runs = [self.bank.curve(row).losses for row in self.rows_of(prefix)]
        if not runs:
            raise KeyError("this prefix is not the start of any run of the bank.")
        demands = {_demand(losses, target) for losses in runs}
        if len(demands) > 1:
            raise KeyError(
                f"this prefix starts {len(runs)} runs of the bank that reach the target at "
                "different batches: its true demand is not known from it."
            )
        remaining = demands.pop() - (len(prefix) - 1)
        return Estimate(float(remaining), float(remaining <= budget))

    def rows_of(self, prefix: np.ndarray) -> list[int]:
        """The rows of the bank whose runs start with ``prefix`` (none, one, or several)."""
        candidates = (
            self._rows.get(self._key(prefix), []) if len(prefix) >= _KEY else range(len(self.bank))
        )
        return [
            row
            for row in candidates
            if np.array_equal(self.bank.curve(row).losses[: len(prefix)], prefix)
        ]

    @staticmethod
    def _key(losses: np.ndarray) -> bytes:
        return np.ascontiguousarray(losses[:_KEY], np.float64).tobytes()


def _demand(losses: np.ndarray, target: float) -> float:
    """R* of ``target`` on a run, ``inf`` if the run never reaches it."""
    try:
        return demand_of(losses, target)
    except ValueError:
        return math.inf


class ErrorLog(BatchPredictor):
    """A predictor that answers as ``predictor`` and logs each answer's error against ``truth``.

    The error of a query is ``log(estimate / true remaining)``; an estimate of ``inf`` (never,
    within the predictor's horizon) is counted apart, and so is a query whose truth the
    clairvoyant predictor cannot tell. A scheduler reading it plays exactly as with
    ``predictor``, so one run gives both its completion and the errors of what it asked.
    """

    def __init__(self, predictor: Predictor, truth: ClairvoyantPredictor) -> None:
        self.predictor = predictor
        self.truth = truth
        self.log_errors: list[float] = []
        self.never = 0
        self.unknown = 0

    def estimate_batch(
        self, prefixes: list[np.ndarray], targets: np.ndarray, budgets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``predictor``'s answers, their errors logged."""
        remaining, p_success = estimate_many(self.predictor, prefixes, targets, budgets)
        for prefix, target, estimate in zip(prefixes, targets, remaining.tolist()):
            try:
                true = self.truth.estimate(prefix, float(target), 0).remaining
            except KeyError:
                self.unknown += 1
                continue
            if math.isinf(estimate):
                self.never += 1
            else:
                self.log_errors.append(math.log(max(estimate, 1.0) / true))
        return remaining, p_success

    def equivalent_noise(self) -> float:
        """The σ of a log-normal error (`TruthLARA`'s noise) as large in the median.

        That is ``median |log error| / 0.6745``, the median of ``|z|`` for ``z ~ N(0, 1)``.
        """
        return float(np.median(np.abs(self._errors())) / 0.6745)

    def bias(self) -> float:
        """The median log error: below 0, the estimates are too low (optimistic) more often."""
        return float(np.median(self._errors()))

    def _errors(self) -> np.ndarray:
        if not self.log_errors:
            raise ValueError("no finite estimate with a known truth was logged.")
        return np.array(self.log_errors)
