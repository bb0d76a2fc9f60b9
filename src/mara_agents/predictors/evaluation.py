"""One query protocol for judging every predictor on recorded curves (design §4 metrics).

A *query* is what the environment asks a predictor: a curve's revealed prefix, a target on that
curve, and a budget of batches. Queries are drawn with a fixed seed, the way the default scenario
draws tasks:

1. the target sits at a uniform fraction (``target_fraction``) of the curve: its running minimum
   there (design §2), which fixes the true demand ``R*``;
2. the prefix length ``n`` is uniform over ``W_min .. R* − 1`` (a ready task that has not yet
   succeeded; targets with ``R* <= W_min`` are redrawn);
3. the budget is uniform over the deadline-window range (batches left before the deadline).

Metrics: **capped MAE** = mean |min(R̂, H) − min(R* − n, H)|; **success accuracy** = accuracy of
``p_success >= 0.5`` against ``R* − n <= budget``; **latency**: the median time of one call
estimating 8 queries at once (new prefixes: nothing cached).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from coreenv import Predictor
from coreenv.curves import CurveBank
from coreenv.curves.targets import target_at_fraction
from coreenv.predictor import estimate_many

__all__ = ["Queries", "QueryConfig", "make_queries", "score"]


@dataclass(frozen=True)
class QueryConfig:
    """How queries are drawn (defaults: the environment's defaults)."""

    per_curve: int = 8
    min_prefix: int = 10
    horizon: int = 500
    target_fraction: tuple[float, float] = (0.03, 0.35)
    budget: tuple[int, int] = (150, 400)
    seed: int = 0


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


def score(predictor: Predictor, queries: Queries, horizon: int, batch: int = 8) -> dict[str, float]:
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
    predicted = np.concatenate(probabilities) >= 0.5
    return {
        "capped_mae": float(np.mean(np.abs(estimate - truth))),
        "success_accuracy": float(np.mean(predicted == success)),
        "latency_ms": 1000.0 * float(np.median(seconds)),
        "queries": len(queries),
    }
