"""Learning curves of MARA training runs: completion on the fixed selection episodes vs steps.

A run's ``history.json`` (`train_mara`) records, at every selection evaluation, the environment
steps so far and the completion rate of each selection episode. Runs of one recipe with different
training seeds make a curve with a spread; two recipes run on the same seeds (the shaping
ablation) are compared seed by seed, and episode by episode on the same selection episodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mara_agents.schedulers.mara import MARA, load_policies

__all__ = ["LearningCurve", "PairedDifference", "last_policies", "paired_runs", "read_curve"]


@dataclass(frozen=True)
class LearningCurve:
    """One run's selection scores: (P,) steps and (P, episodes) completion rates."""

    name: str
    steps: np.ndarray
    rates: np.ndarray

    @property
    def means(self) -> np.ndarray:
        """(P,) mean completion at each evaluation."""
        return self.rates.mean(axis=1)

    @property
    def final(self) -> float:
        """Mean completion at the last evaluation."""
        return float(self.means[-1])

    @property
    def best(self) -> float:
        """The best mean completion of any evaluation."""
        return float(self.means.max())

    def area(self) -> np.ndarray:
        """(episodes,) each selection episode's completion averaged over training steps.

        The area under the learning curve (trapezoids over the steps) divided by the steps
        spanned: a run that learns sooner scores higher at the same final completion.
        """
        widths = np.diff(self.steps)[:, None]
        heights = (self.rates[1:] + self.rates[:-1]) / 2
        return (widths * heights).sum(axis=0) / (self.steps[-1] - self.steps[0])


def read_curve(work: Path) -> LearningCurve:
    """The learning curve of the run in folder ``work`` (its ``history.json``)."""
    path = Path(work) / "history.json"
    if not path.is_file():
        raise FileNotFoundError(f"no {path}: not a train_mara run folder (or no evaluation yet).")
    points = [h for h in json.loads(path.read_text()) if "rates" in h and "steps" in h]
    if len(points) < 2:
        raise ValueError(f"{path} has {len(points)} evaluations with per-episode rates; need 2.")
    return LearningCurve(
        Path(work).name,
        np.array([p["steps"] for p in points], np.int64),
        np.array([p["rates"] for p in points], np.float64),
    )


@dataclass(frozen=True)
class PairedDifference:
    """``first − second`` over runs paired by training seed, each on the same episodes."""

    per_seed: np.ndarray
    """(S,) the difference of each seed's pair, averaged over the episodes."""
    per_seed_se: np.ndarray
    """(S,) its standard error over the episodes."""

    @property
    def mean(self) -> float:
        """The mean difference over seeds."""
        return float(self.per_seed.mean())

    @property
    def se(self) -> float:
        """Its standard error over seeds (NaN with one seed)."""
        n = len(self.per_seed)
        return float(self.per_seed.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")


def paired_runs(
    first: list[LearningCurve], second: list[LearningCurve], measure: str
) -> PairedDifference:
    """``first[i] − second[i]`` of ``measure`` ("final" or "area") per selection episode.

    Runs are paired in the order given (the same training seed); both must have been judged on
    the same selection episodes.
    """
    if len(first) != len(second) or not first:
        raise ValueError(f"need runs paired by seed, got {len(first)} and {len(second)}.")
    readings = {"final": lambda c: c.rates[-1], "area": LearningCurve.area}
    if measure not in readings:
        raise ValueError(f"measure must be one of {sorted(readings)}, got {measure!r}.")
    means, ses = [], []
    for a, b in zip(first, second):
        x, y = readings[measure](a), readings[measure](b)
        if x.shape != y.shape:
            raise ValueError(
                f"runs {a.name} and {b.name} were judged on {x.size} and {y.size} episodes."
            )
        diff = x - y
        means.append(diff.mean())
        ses.append(diff.std(ddof=1) / np.sqrt(diff.size))
    return PairedDifference(np.array(means), np.array(ses))


def last_policies(works: list[Path]) -> list[MARA]:
    """Each run's last policy (``last.pt``), named after its run folder."""
    paths = [Path(work) / "last.pt" for work in works]
    for path in paths:
        if not path.is_file():
            raise FileNotFoundError(f"no {path}: the run has not reached an evaluation yet.")
    policies = load_policies(paths)
    for work, policy in zip(works, policies):
        policy.name = Path(work).name
    return policies
