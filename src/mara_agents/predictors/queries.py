"""One query protocol for scoring every predictor on recorded curves (design §4 metrics).

A *query* is what the environment asks a predictor: a curve's revealed prefix, a target on that
curve, and a budget of batches. Queries are drawn with a fixed seed, the way the default scenario
draws tasks (the bounds are the environment's own defaults, read from `coreenv.EnvConfig`):

1. the target sits at a uniform fraction (``target_fraction``) of the curve: its running minimum
   there (design §2), which fixes the true demand ``R*``;
2. the prefix length ``n`` is uniform over ``W_min .. R* − 1`` (a ready task that has not yet
   succeeded; targets with ``R* <= W_min`` are redrawn);
3. the budget is uniform over the deadline-window range (batches left before the deadline).

Metrics (`score_predictor`): **capped MAE** = mean |min(R̂, H) − min(R* − n, H)|; **success
accuracy** = accuracy of ``p_success >= 0.5`` against ``R* − n <= budget``; **calibration
error** (ECE) = the share-weighted mean, over 10 equal-width bins of ``p_success``, of
|mean ``p_success`` − share of successes| (`reliability`); **latency**: the median time of one
call estimating 8 queries at once (new prefixes: nothing cached).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from coreenv import EnvConfig, Predictor
from coreenv.curves import CurveBank
from coreenv.curves.targets import target_at_fraction
from coreenv.predictor import estimate_many
from mara_agents.predictors.horizon import HORIZON

__all__ = [
    "PredictorScore",
    "Queries",
    "QueryConfig",
    "Reliability",
    "ScoreComparison",
    "compare_scores",
    "make_queries",
    "reliability",
    "score_predictor",
]

CALIBRATION_BINS = 10
"""Equal-width bins of ``p_success`` over [0, 1] for the calibration error."""

_ENV = EnvConfig()  # the environment's defaults: queries are what its default scenario asks


@dataclass(frozen=True)
class QueryConfig:
    """How queries are drawn (the bounds default to the environment's)."""

    per_curve: int = 8
    """Queries drawn on every curve."""
    min_prefix: int = _ENV.min_prefix
    """W_min: the shortest prefix asked about (a task is prediction-ready from there on)."""
    target_fraction: tuple[float, float] = _ENV.target_fraction
    """Range of the fraction of the curve at which the target sits."""
    budget: tuple[int, int] = _ENV.deadline_window
    """Inclusive range of the budget in batches (the deadline windows)."""
    seed: int = 0
    """Seeds the draw, so every predictor is asked the same queries."""

    def __post_init__(self) -> None:
        if self.per_curve < 1 or self.min_prefix < 1:
            raise ValueError(
                f"QueryConfig needs per_curve >= 1 and min_prefix >= 1, got {self.per_curve} and "
                f"{self.min_prefix}."
            )
        low, high = self.target_fraction
        if not 0.0 < low <= high <= 1.0:
            raise ValueError(
                f"QueryConfig.target_fraction must be (low, high) in (0, 1], got "
                f"{self.target_fraction!r}."
            )
        if not 0 <= self.budget[0] <= self.budget[1]:
            raise ValueError(
                f"QueryConfig.budget must be (low, high) with 0 <= low <= high, got "
                f"{self.budget!r}."
            )


@dataclass(frozen=True)
class Queries:
    """Queries with their truth; ``remaining`` is ``R* − n`` (not capped)."""

    prefixes: list[np.ndarray]
    targets: np.ndarray
    budgets: np.ndarray
    remaining: np.ndarray
    rows: np.ndarray  # bank row of each query
    families: np.ndarray

    def __len__(self) -> int:
        return len(self.prefixes)


@dataclass(frozen=True)
class PredictorScore:
    """How a predictor answered a set of queries (see the module docstring)."""

    capped_mae: float
    """Mean |min(R̂, H) − min(R* − n, H)| in batches."""
    success_accuracy: float
    """Share of queries where ``p_success >= 0.5`` agrees with ``R* − n <= budget``."""
    calibration_error: float
    """Expected calibration error of ``p_success`` against success within the budget."""
    success_share: float
    """Share of queries that do succeed within the budget (the accuracy of always saying yes)."""
    latency_ms: float
    """Median milliseconds of one call estimating a batch of queries."""
    queries: int
    """How many queries were scored."""
    reliability: Reliability
    """The reliability diagram behind ``calibration_error``."""


@dataclass(frozen=True)
class Reliability:
    """A reliability diagram: per bin of predicted probability, predicted against observed.

    Empty bins hold ``count`` 0 and NaN means.
    """

    edges: np.ndarray  # (bins + 1,) bin edges over [0, 1]
    count: np.ndarray  # (bins,) queries per bin
    predicted: np.ndarray  # (bins,) mean predicted probability
    observed: np.ndarray  # (bins,) share of queries that succeeded

    @property
    def calibration_error(self) -> float:
        """ECE: sum over bins of (count / total) · |predicted − observed|."""
        full = self.count > 0
        gaps = np.abs(self.predicted[full] - self.observed[full])
        return float(np.sum(self.count[full] * gaps) / np.sum(self.count))


def reliability(
    probabilities: np.ndarray, outcomes: np.ndarray, bins: int = CALIBRATION_BINS
) -> Reliability:
    """Bin predicted probabilities (the last bin includes 1) and compare with the outcomes."""
    probabilities = np.asarray(probabilities, np.float64)
    outcomes = np.asarray(outcomes, np.float64)
    if probabilities.shape != outcomes.shape or probabilities.size == 0:
        raise ValueError(
            f"reliability needs as many outcomes as probabilities (at least one), got shapes "
            f"{probabilities.shape} and {outcomes.shape}."
        )
    edges = np.linspace(0.0, 1.0, bins + 1)
    index = np.clip(np.searchsorted(edges, probabilities, side="right") - 1, 0, bins - 1)
    count = np.bincount(index, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        predicted = np.bincount(index, probabilities, bins) / count
        observed = np.bincount(index, outcomes, bins) / count
    return Reliability(edges, count, predicted, observed)


@dataclass(frozen=True)
class ScoreComparison:
    """How a predictor's score compares with a baseline's on the same queries."""

    mae_reduction: float
    """1 − capped MAE / the baseline's (0.5: half the error)."""
    accuracy_gain: float
    """Success accuracy minus the baseline's."""
    latency_ratio: float
    """Latency over the baseline's."""


def compare_scores(score: PredictorScore, baseline: PredictorScore) -> ScoreComparison:
    """``score`` relative to ``baseline`` (both on the same queries)."""
    return ScoreComparison(
        mae_reduction=1 - score.capped_mae / baseline.capped_mae,
        accuracy_gain=score.success_accuracy - baseline.success_accuracy,
        latency_ratio=score.latency_ms / baseline.latency_ms,
    )


def make_queries(bank: CurveBank, config: QueryConfig = QueryConfig()) -> Queries:
    """Draw ``config.per_curve`` queries on every curve of ``bank``."""
    rng = np.random.default_rng(config.seed)
    prefixes, targets, budgets, remaining, rows = [], [], [], [], []
    for row in range(len(bank)):
        losses = bank.curve(row).losses
        for _ in range(config.per_curve):
            for _attempt in range(20):
                target, demand = target_at_fraction(losses, rng.uniform(*config.target_fraction))
                if demand > config.min_prefix:
                    break
            else:
                continue  # a curve that reaches every target within W_min batches: no query
            n = int(rng.integers(config.min_prefix, demand))
            prefixes.append(losses[: n + 1])
            targets.append(target)
            budgets.append(int(rng.integers(config.budget[0], config.budget[1] + 1)))
            remaining.append(demand - n)
            rows.append(row)
    rows = np.array(rows, np.int64)
    return Queries(
        prefixes, np.array(targets), np.array(budgets), np.array(remaining), rows, bank.family[rows]
    )


def score_predictor(
    predictor: Predictor, queries: Queries, horizon: int = HORIZON, batch: int = 8
) -> PredictorScore:
    """Capped MAE, success accuracy and the median latency of a call estimating ``batch`` queries.

    One warm-up call comes first; the median is robust to a busy machine.
    """
    estimate_many(
        predictor, queries.prefixes[:batch], queries.targets[:batch], queries.budgets[:batch]
    )
    estimates, probabilities, seconds = [], [], []
    for start in range(0, len(queries), batch):
        part = slice(start, start + batch)
        begin = time.perf_counter()
        remaining, p_success = estimate_many(
            predictor, queries.prefixes[part], queries.targets[part], queries.budgets[part]
        )
        seconds.append(time.perf_counter() - begin)
        estimates.append(remaining)
        probabilities.append(p_success)
    estimate = np.minimum(np.concatenate(estimates), horizon)
    truth = np.minimum(queries.remaining, horizon)
    success = queries.remaining <= queries.budgets
    probability = np.concatenate(probabilities)
    diagram = reliability(probability, success)
    return PredictorScore(
        capped_mae=float(np.mean(np.abs(estimate - truth))),
        success_accuracy=float(np.mean((probability >= 0.5) == success)),
        calibration_error=diagram.calibration_error,
        success_share=float(np.mean(success)),
        latency_ms=1000.0 * float(np.median(seconds)),
        queries=len(queries),
        reliability=diagram,
    )
