"""Query protocols for scoring every predictor on recorded curves (design §4 metrics).

A *query* is what a predictor is asked: a curve's revealed prefix, a target on that curve, and a
budget of batches. Queries are drawn with a fixed seed, by one of two protocols
(`QueryConfig.targets`, choices `TARGETS`):

``"environment"`` (the default): queries are drawn the way the default scenario draws tasks (the
bounds are the environment's own defaults, read from `coreenv.EnvConfig`):

1. the target sits at a uniform fraction (``target_fraction``) of the curve: its running minimum
   there (design §2), which fixes the true demand ``R*``;
2. the prefix length ``n`` is uniform over ``W_min .. R* − 1`` (a ready task that has not yet
   succeeded; targets with ``R* <= W_min`` are redrawn, up to 20 times, then the query is
   skipped);
3. the budget is uniform over the deadline-window range (batches left before the deadline).

``"user"``: what a user asks of a curve they are logging, "when will this run reach a loss it
really reaches later?":

1. the prefix length ``n`` is uniform over ``user_prefix`` (inclusive), its upper end clipped to
   the curve's last batch − 1 (a curve too short for the lower end gets no query);
2. the target is the loss at a batch ``t`` uniform over ``n + 1 .. min(end, n + reach)``,
   redrawn (up to 20 times, then the query is skipped) unless it is strictly below the lowest
   loss of the prefix, so the task has not yet succeeded;
3. ``R*`` is the first batch after ``n`` whose loss is at most the target (so
   ``R* − n >= 1``, and ``R* <= t``);
4. the budget is uniform over ``user_budget`` (inclusive).

Metrics (`score_predictor`): **capped MAE** = mean |min(R̂, H) − min(R* − n, H)|; **success
accuracy** = accuracy of ``p_success >= 0.5`` against ``R* − n <= budget``; **calibration
error** (ECE) = the share-weighted mean, over 10 equal-width bins of ``p_success``, of
|mean ``p_success`` − share of successes| (`reliability`); **AUC** = the ROC AUC of
``p_success`` against success within the budget (how well it ranks, ties counting one half;
NaN when every query succeeds or every one fails; `roc_auc`); **latency**: the median time of one
call estimating 8 queries at once (new prefixes: nothing cached).
"""

from __future__ import annotations

import csv
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coreenv import BankError, EnvConfig, Predictor, TaskContext, estimate_many
from coreenv.curves import CurveBank, bank_from_csv, demand_of, load_bank, target_at_fraction
from mara_agents.checks import require
from mara_agents.predictors.horizon import HORIZON

__all__ = [
    "TARGETS",
    "PredictorScore",
    "Queries",
    "QueryConfig",
    "Reliability",
    "ScoreComparison",
    "compare_scores",
    "make_queries",
    "read_bank",
    "reliability",
    "roc_auc",
    "score_banks",
    "score_predictor",
]

CALIBRATION_BINS = 10
"""Equal-width bins of ``p_success`` over [0, 1] for the calibration error."""

TARGETS = ("environment", "user")
"""Query protocols (`QueryConfig.targets`): targets as the environment draws tasks, or as a user
asks about a logged curve (see the module docstring)."""

ATTEMPTS = 20
"""Draws of a query's target before the query is skipped."""

_ENV = EnvConfig()  # the environment's defaults: queries are what its default scenario asks


@dataclass(frozen=True)
class QueryConfig:
    """How queries are drawn (the environment protocol's bounds default to the environment's)."""

    per_curve: int = 8
    """Queries drawn on every curve."""
    min_prefix: int = _ENV.min_prefix
    """Environment protocol: W_min, the shortest prefix asked about (a task is prediction-ready
    from there on)."""
    target_fraction: tuple[float, float] = _ENV.target_fraction
    """Environment protocol: range of the fraction of the curve at which the target sits."""
    budget: tuple[int, int] = _ENV.deadline_window
    """Environment protocol: inclusive range of the budget in batches (the deadline windows)."""
    seed: int = 0
    """Seeds the draw, so every predictor is asked the same queries."""
    targets: str = "environment"
    """The protocol, one of `TARGETS`: ``"environment"`` draws tasks as the default scenario
    does; ``"user"`` asks for a loss the run reaches later (the ``user_*`` and ``reach`` fields)."""
    user_prefix: tuple[int, int] = (20, 300)
    """User protocol: inclusive range of the prefix length ``n`` (the upper end is clipped to the
    curve's last batch − 1)."""
    reach: int = 400
    """User protocol: the target is the loss at a batch at most this many batches after ``n``."""
    user_budget: tuple[int, int] = (20, 400)
    """User protocol: inclusive range of the budget in batches."""

    def __post_init__(self) -> None:
        if self.targets not in TARGETS:
            raise ValueError(f"QueryConfig.targets must be one of {TARGETS}, got {self.targets!r}.")
        require(self, "an int >= 1", ("per_curve", "min_prefix", "reach"))
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
        if not 1 <= self.user_prefix[0] <= self.user_prefix[1]:
            raise ValueError(
                f"QueryConfig.user_prefix must be (low, high) with 1 <= low <= high, got "
                f"{self.user_prefix!r}."
            )
        if not 0 <= self.user_budget[0] <= self.user_budget[1]:
            raise ValueError(
                f"QueryConfig.user_budget must be (low, high) with 0 <= low <= high, got "
                f"{self.user_budget!r}."
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
    auc: float
    """ROC AUC of ``p_success`` against success within the budget (NaN with one class only)."""


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


def roc_auc(probabilities: np.ndarray, outcomes: np.ndarray) -> float:
    """ROC AUC of ``probabilities`` against binary ``outcomes``; ties count one half.

    The probability that a random success is given a higher probability than a random failure;
    NaN when all outcomes are one class (the AUC is undefined).
    """
    from sklearn.metrics import roc_auc_score  # scikit-learn: the agents extra

    probabilities = np.asarray(probabilities, np.float64)
    outcomes = np.asarray(outcomes, bool)
    if probabilities.shape != outcomes.shape or probabilities.ndim != 1:
        raise ValueError(
            f"roc_auc needs 1-D probabilities and outcomes of one shape, got shapes "
            f"{probabilities.shape} and {outcomes.shape}."
        )
    if outcomes.all() or not outcomes.any():
        return float("nan")
    return float(roc_auc_score(outcomes, probabilities))


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


def _environment_task(
    losses: np.ndarray, rng: np.random.Generator, config: QueryConfig
) -> tuple[int, float, int] | None:
    """(n, target, R*) as the environment draws a task, or None (no ready task on this curve)."""
    for _attempt in range(ATTEMPTS):
        target, demand = target_at_fraction(losses, rng.uniform(*config.target_fraction))
        if demand > config.min_prefix:
            break
    else:
        return None  # a curve that reaches every target within W_min batches: no query
    return int(rng.integers(config.min_prefix, demand)), target, demand


def _user_task(
    losses: np.ndarray, rng: np.random.Generator, config: QueryConfig
) -> tuple[int, float, int] | None:
    """(n, target, R*) for a loss the run reaches after the prefix, or None (none found)."""
    end = len(losses) - 1  # the last batch
    low, high = config.user_prefix[0], min(config.user_prefix[1], end - 1)
    if low > high:
        return None  # a curve too short for the shortest prefix (and one batch after it)
    n = int(rng.integers(low, high + 1))
    best = losses[: n + 1].min()
    last = min(end, n + config.reach)
    for _attempt in range(ATTEMPTS):
        t = int(rng.integers(n + 1, last + 1))
        if losses[t] < best:
            break
    else:
        return None  # no loss below the prefix's best found within reach
    target = float(losses[t])
    return n, target, demand_of(losses[: t + 1], target)  # first crossing: after n, at most t


_TASKS = {"environment": _environment_task, "user": _user_task}
"""How each protocol of `TARGETS` draws (n, target, R*) on one curve."""


def make_queries(bank: CurveBank, config: QueryConfig = QueryConfig()) -> Queries:
    """Draw ``config.per_curve`` queries on every curve of ``bank`` (fewer where none fits)."""
    rng = np.random.default_rng(config.seed)
    draw_task = _TASKS[config.targets]
    budget = config.budget if config.targets == "environment" else config.user_budget
    prefixes, targets, budgets, remaining, rows = [], [], [], [], []
    for row in range(len(bank)):
        losses = bank.curve(row).losses
        for _ in range(config.per_curve):
            task = draw_task(losses, rng, config)
            if task is None:
                continue
            n, target, demand = task
            prefixes.append(losses[: n + 1])
            targets.append(target)
            budgets.append(int(rng.integers(budget[0], budget[1] + 1)))
            remaining.append(demand - n)
            rows.append(row)
    rows = np.array(rows, np.int64)
    return Queries(
        prefixes, np.array(targets), np.array(budgets), np.array(remaining), rows, bank.family[rows]
    )


def score_predictor(
    predictor: Predictor,
    queries: Queries,
    horizon: int = HORIZON,
    batch: int = 8,
    contexts: Sequence[TaskContext] | None = None,
) -> PredictorScore:
    """Capped MAE, success accuracy and the median latency of a call estimating ``batch`` queries.

    One warm-up call comes first; the median is robust to a busy machine. ``contexts``: one
    `TaskContext` per query, given to a predictor that reads context (`reads_context`); others
    answer without them.
    """
    if len(queries) == 0:
        raise ValueError("score_predictor needs at least one query, got none.")
    if contexts is not None and len(contexts) != len(queries):
        raise ValueError(
            f"score_predictor needs one context per query, got {len(contexts)} for "
            f"{len(queries)} queries."
        )
    _estimate(predictor, queries, slice(0, batch), contexts)
    estimates, probabilities, seconds = [], [], []
    for start in range(0, len(queries), batch):
        begin = time.perf_counter()
        remaining, p_success = _estimate(predictor, queries, slice(start, start + batch), contexts)
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
        auc=roc_auc(probability, success),
    )


def _estimate(
    predictor: Predictor,
    queries: Queries,
    part: slice,
    contexts: Sequence[TaskContext] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(R̂, p_success) of the queries ``part``; their ``contexts`` go to a predictor reading them."""
    prefixes, targets = queries.prefixes[part], queries.targets[part]
    budgets = queries.budgets[part]
    asked = None if contexts is None else contexts[part]
    return estimate_many(predictor, prefixes, targets, budgets, asked)


def score_banks(
    banks: Mapping[str, CurveBank],
    predictors: Mapping[str, Predictor],
    config: QueryConfig = QueryConfig(),
    horizon: int = HORIZON,
) -> dict[tuple[str, str], PredictorScore]:
    """Every predictor on the queries of every bank, keyed by (bank name, predictor name).

    Each bank's queries are drawn once (``config``), so every predictor answers the same ones.
    """
    results = {}
    for group, bank in banks.items():
        queries = make_queries(bank, config)
        for name, predictor in predictors.items():
            results[(group, name)] = score_predictor(predictor, queries, horizon)
    return results


def read_bank(path: str | os.PathLike) -> CurveBank:
    """A user's curves: a ``.npz`` bank (`load_bank`) or any CSV `bank_from_csv` reads.

    The bank is named after the file's stem. Raise `BankError` naming the file when it is missing,
    unreadable or not a valid bank.
    """
    path = Path(path)
    if not path.is_file():
        raise BankError(f"no file at {str(path)!r}.")
    if path.suffix.lower() == ".npz":
        return load_bank(path)
    try:
        return bank_from_csv(path, name=path.stem)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BankError(f"{str(path)!r} is not a readable CSV of training logs: {e}") from e
