"""Interval estimates over episodes, as the field reports them (Agarwal et al., 2021).

Means come with 95% percentile-bootstrap confidence intervals (`scipy.stats.bootstrap`); means
over several cells (loads, task sets) resample each cell's episodes separately (a stratified
bootstrap); comparisons of two methods are paired by episode and give the probability that one
does better on an episode. The bootstrap is seeded, so a report prints the same intervals each
time (docs/benchmark.md, *Statistics*).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "CONFIDENCE",
    "RESAMPLES",
    "Interval",
    "improvement_interval",
    "improvement_probability",
    "iqm",
    "iqm_interval",
    "mean_interval",
    "paired_interval",
]

CONFIDENCE = 0.95
"""Coverage of every interval."""
RESAMPLES = 2000
"""Bootstrap resamples per interval."""


@dataclass(frozen=True)
class Interval:
    """An estimate and its confidence interval."""

    estimate: float
    low: float
    high: float

    def scaled(self, factor: float) -> Interval:
        """The same interval in other units (e.g. 100 for percent)."""
        return Interval(self.estimate * factor, self.low * factor, self.high * factor)

    def text(self, digits: int = 1, sign: bool = False) -> str:
        """``estimate [low, high]``, e.g. ``52.1 [48.3, 55.9]``."""
        estimate, low, high = (round(x, digits) + 0.0 for x in (self.estimate, self.low, self.high))
        head = f"{estimate:+.{digits}f}" if sign else f"{estimate:.{digits}f}"  # + 0.0: no "-0.0"
        return f"{head} [{low:.{digits}f}, {high:.{digits}f}]"


def mean_interval(strata: np.ndarray | Sequence[np.ndarray], seed: int = 0) -> Interval:
    """The mean of the strata's means, with a stratified bootstrap interval.

    ``strata`` is one array of per-episode values, or several (one per cell), each resampled
    within itself. A stratum of one episode contributes its value without spread.
    """
    samples = _strata(strata)
    estimate = float(np.mean([s.mean() for s in samples]))
    varying = tuple(s for s in samples if s.size > 1 and np.any(s != s[0]))
    if not varying:
        return Interval(estimate, estimate, estimate)  # nothing varies: no resampling to do
    fixed = sum(s.mean() for s in samples if s.size < 2 or np.all(s == s[0]))

    def mean_of_means(*resampled: np.ndarray, axis: int) -> np.ndarray:
        return (fixed + sum(r.mean(axis=axis) for r in resampled)) / len(samples)

    result = stats.bootstrap(
        varying,
        mean_of_means,
        n_resamples=RESAMPLES,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return Interval(estimate, float(interval.low), float(interval.high))


def paired_interval(
    first: np.ndarray | Sequence[np.ndarray],
    second: np.ndarray | Sequence[np.ndarray],
    seed: int = 0,
) -> Interval:
    """``second − first`` over paired episodes (stratum by stratum), with its interval."""
    differences = [b - a for a, b in zip(_strata(first), _paired(first, second))]
    return mean_interval(differences, seed)


def improvement_probability(
    first: np.ndarray | Sequence[np.ndarray], second: np.ndarray | Sequence[np.ndarray]
) -> float:
    """P(``second`` beats ``first`` on an episode), ties counting one half, averaged over strata."""
    shares = [
        np.mean((b > a) + 0.5 * (b == a)) for a, b in zip(_strata(first), _paired(first, second))
    ]
    return float(np.mean(shares))


def improvement_interval(
    first: np.ndarray | Sequence[np.ndarray],
    second: np.ndarray | Sequence[np.ndarray],
    seed: int = 0,
) -> Interval:
    """`improvement_probability` with a stratified bootstrap interval over paired episodes."""
    wins = [(b > a) + 0.5 * (b == a) for a, b in zip(_strata(first), _paired(first, second))]
    picks = _resamples(wins, seed)
    shares = np.mean([w[pick].mean(axis=1) for w, pick in zip(wins, picks)], axis=0)
    return _percentiles(float(np.mean([w.mean() for w in wins])), shares)


def iqm_interval(strata: np.ndarray | Sequence[np.ndarray], seed: int = 0) -> Interval:
    """The IQM of every episode of the strata, with a stratified bootstrap interval."""
    samples = _strata(strata)
    picks = _resamples(samples, seed)
    pooled = np.concatenate([s[pick] for s, pick in zip(samples, picks)], axis=1)
    resampled = stats.trim_mean(pooled, 0.25, axis=1)
    return _percentiles(iqm(np.concatenate(samples)), resampled)


def _resamples(strata: Sequence[np.ndarray], seed: int) -> list[np.ndarray]:
    """Per stratum, (RESAMPLES, n) indices of its episodes drawn with replacement."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, s.size, (RESAMPLES, s.size)) for s in strata]


def _percentiles(estimate: float, resampled: np.ndarray) -> Interval:
    """``estimate`` with the percentile interval of its bootstrap values."""
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(resampled, [tail, 100 - tail])
    return Interval(estimate, float(low), float(high))


def iqm(values: np.ndarray) -> float:
    """Interquartile mean: the mean of the middle half of the values (robust to outliers)."""
    values = np.asarray(values, float)
    if values.size == 0:
        raise ValueError("iqm of no values.")
    return float(stats.trim_mean(values, 0.25))


def _strata(strata: np.ndarray | Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """One 1-D float array per stratum; none empty."""
    if isinstance(strata, np.ndarray) and strata.ndim == 1:
        strata = [strata]
    samples = tuple(np.asarray(s, float).ravel() for s in strata)
    if not samples or any(s.size == 0 for s in samples):
        raise ValueError("intervals need at least one episode in every stratum.")
    return samples


def _paired(first: np.ndarray | Sequence[np.ndarray], second: np.ndarray | Sequence[np.ndarray]):
    """``second``'s strata, checked to pair episode by episode with ``first``'s."""
    a, b = _strata(first), _strata(second)
    if [s.shape for s in a] != [s.shape for s in b]:
        raise ValueError(
            f"paired samples must have the same episodes per stratum, got "
            f"{[s.size for s in a]} and {[s.size for s in b]}."
        )
    return b
