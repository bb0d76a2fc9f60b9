"""Analogs: a prefix matched to other runs of its kind, and when they reach its target.

A task's revealed losses are compared with those of runs of the same kind (recorded training
runs, or tasks its episode has finished) over the initial loss and up to ``windows`` log-spaced
windows after it, up to one constant factor fitted on the latest quarter of them. The nearest
runs, scaled by that factor, say when the task reaches its target. `blend` moves a predictor's
sampled futures towards that answer. `AnalogPredictor` (realisable: it reads the kind from the
task's `coreenv.TaskContext`) and the diagnostic `KindAnalog` (told the kind by the bank) share it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from coreenv import Predictor, estimate_many
from mara_agents.checks import require

__all__ = ["Analogs", "AnalogConfig", "Answer", "Match", "answer", "blend", "blend_each", "futures"]


@dataclass(frozen=True)
class AnalogConfig:
    """How a kind is named and a prefix matched to its analogs."""

    kind_fields: tuple[str, ...] = ("family",)
    """Description (config) fields whose values together name a run's kind."""
    windows: int = 24
    """Log-spaced windows of the prefix whose mean log losses are compared (at most: on a short
    prefix some coincide and merge), after the window of the initial loss."""
    neighbours: int = 1
    """Nearest analogs whose crossings are read; their median is the analog's answer."""

    def __post_init__(self) -> None:
        if not self.kind_fields or not all(isinstance(f, str) and f for f in self.kind_fields):
            raise ValueError(
                "AnalogConfig.kind_fields must be one or more field names, got "
                f"{self.kind_fields!r}."
            )
        require(self, "an int >= 1", ("windows", "neighbours"))


@dataclass(frozen=True)
class Answer:
    """What the analogs say of a task: it needs ``batches`` more, or at least that many."""

    batches: float
    """Batches after the prefix until the target (``inf``: the analogs never reach it)."""
    at_least: bool = False
    """True where the nearest analogs were revealed only so far (finished tasks) and did not
    reach the target there: ``batches`` is then a lower bound."""


class Analogs:
    """Runs of one kind as padded log-loss rows, each complete (recorded) or revealed so far.

    Args:
        curves: the runs' losses, ``losses[n]`` after n batches.
        revealed: per run, True if its losses stop where training stopped (a finished task),
            False if they are the whole recorded run.
    """

    def __init__(self, curves: Sequence[np.ndarray], revealed: Sequence[bool]) -> None:
        width = max((len(c) for c in curves), default=0)
        self.log = np.full((len(curves), width), np.nan)
        for i, curve in enumerate(curves):
            self.log[i, : len(curve)] = np.log(np.asarray(curve, np.float64))
        self.lengths = np.array([len(c) for c in curves], np.int64)
        self.revealed = np.asarray(revealed, bool)
        self.sums = np.concatenate(
            [np.zeros((len(curves), 1)), np.cumsum(np.nan_to_num(self.log), axis=1)], axis=1
        )

    def __len__(self) -> int:
        return len(self.lengths)

    def nearest(
        self,
        prefix: np.ndarray,
        target: float,
        config: AnalogConfig,
        rows: Sequence[int] | None = None,
    ) -> list[Match]:
        """The ``neighbours`` runs (among ``rows``, default all) nearest the prefix, nearest first.

        A run is a candidate if it is longer than the prefix.
        """
        n = len(prefix) - 1
        rows = np.arange(len(self)) if rows is None else np.asarray(rows, np.int64)
        rows = rows[self.lengths[rows] > n + 1]
        if rows.size == 0:
            return []
        edges = np.unique(
            np.concatenate([[0], np.geomspace(1, n + 1, config.windows + 1).astype(int)])
        )
        sums = np.concatenate([[0.0], np.cumsum(np.log(prefix))])
        widths = np.diff(edges)
        query = (sums[edges[1:]] - sums[edges[:-1]]) / widths
        candidates = np.diff(self.sums[np.ix_(rows, edges)], axis=1) / widths
        gaps = query - candidates
        tail = max(1, len(widths) // 4)  # the factor is fitted on the latest windows
        shift = gaps[:, -tail:].mean(axis=1)
        distance = np.sqrt(np.mean((gaps - shift[:, None]) ** 2, axis=1))
        matches = []
        for j in np.argsort(distance, kind="stable")[: config.neighbours].tolist():
            row = rows[j]
            revealed = bool(self.revealed[row])
            later = self.log[row, n + 1 : self.lengths[row]] + shift[j]
            hits = np.flatnonzero(later <= math.log(target))
            if hits.size:
                matches.append(Match(float(distance[j]), float(hits[0] + 1), False, revealed))
            elif revealed:
                matches.append(Match(float(distance[j]), float(later.size + 1), True, revealed))
            else:
                matches.append(Match(float(distance[j]), math.inf, False, revealed))
        return matches


class Match(NamedTuple):
    """One analog of a prefix: how far it is, and when (or after at least how many) it crosses."""

    distance: float
    batches: float
    at_least: bool
    revealed: bool = False
    """Whether the analog is a finished task (revealed so far), not a recorded run."""


def answer(matches: Sequence[Match], neighbours: int) -> Answer | None:
    """What the ``neighbours`` nearest of ``matches`` (from any `Analogs`) say; None if none.

    The median of their crossings; where most of them only bound it from below, the median of
    those bounds, as a lower bound.
    """
    nearest = sorted(matches, key=lambda m: m.distance)[:neighbours]
    if not nearest:
        return None
    bounds = [m.batches for m in nearest if m.at_least]
    if 2 * len(bounds) > len(nearest):
        return Answer(float(np.median(bounds)), at_least=True)
    return Answer(float(np.median([m.batches for m in nearest])))


def futures(base: Predictor, prefixes: list[np.ndarray], targets: np.ndarray) -> np.ndarray:
    """(B, S) float64 ``base``'s sampled remaining batches, or its estimate as one sample."""
    sampler = getattr(base, "sampled_crossings", None)
    if sampler is None:
        budgets = np.zeros(len(prefixes), np.int64)
        return np.array(estimate_many(base, prefixes, targets, budgets)[0], np.float64)[:, None]
    return np.array(sampler(prefixes, targets), np.float64)


def blend_each(samples: np.ndarray, found: Sequence[Sequence[Match]], neighbours: int) -> int:
    """`blend` each task's row of (B, S) samples, in place, towards its analogs' `answer`.

    ``found``: each task's analogs, nearest first; ``neighbours`` of them are read. Returns the
    number of tasks left unchanged.
    """
    return sum(not blend(row, answer(matches, neighbours)) for row, matches in zip(samples, found))


def blend(samples: np.ndarray, answer: Answer | None) -> bool:
    """Move one task's sampled remaining batches (S,) towards ``answer``, in place.

    They are scaled by one factor: to a median that is the geometric mean of theirs and the
    analog's (each at least 1 batch), or the analog's where theirs is never; for a lower bound,
    up to it where their median is below it. Returns False (samples unchanged) where there is
    no answer, it says never, or the samples' median is 0.
    """
    median = float(np.median(samples))
    if answer is None or math.isinf(answer.batches) or median <= 0:
        return False
    if answer.at_least:
        if median < answer.batches:
            samples *= answer.batches / median
        return True
    if math.isinf(median):
        samples[:] = answer.batches
    else:
        samples *= math.sqrt(max(answer.batches, 1.0) * max(median, 1.0)) / median
    return True
