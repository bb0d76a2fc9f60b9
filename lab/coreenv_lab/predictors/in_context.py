"""`AnalogPredictor`: a predictor that reads each task's context, what it is and what finished.

It answers with its base predictor (FM, say), moved towards the nearest *analog* of the task's
kind (`coreenv_lab.predictors.analogs`): among recorded reference runs of that kind (training
runs), and among the tasks of the kind its episode has finished (the history of
``EnvConfig(information="history")``), whose losses are known only as far as training revealed
them. So on a kind it never saw, it answers as its base until tasks of the kind finish, then
from them. The kind is named by ``kind_fields`` of the task's description; where no run of that
kind is long enough, by fewer of them (the last dropped first), down to the first alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from coreenv import Description, Estimate, FinishedTask, Predictor, TaskContext, estimate_many
from coreenv.curves import CurveBank
from coreenv_lab.predictors.analogs import (
    AnalogConfig,
    Analogs,
    Match,
    blend_each,
    futures,
)

if TYPE_CHECKING:
    from coreenv_lab.predictors.analog_weigher import AnalogWeigher

__all__ = ["AnalogPredictor"]

IN_CONTEXT = AnalogConfig(kind_fields=("family", "optimizer"), neighbours=3)
"""`AnalogPredictor`'s default: kinds of family and optimizer, falling back to the family, read
through their three nearest analogs (chosen on the ID training runs:
``studies/cluster_memory/choose_analog.py``)."""


class AnalogPredictor:
    """``base``'s answers moved towards the nearest analogs of each task's kind (reads context).

    Args:
        base: the predictor blended with; it answers alone where no analog is found.
        reference: recorded runs (complete) read as analogs too, by their descriptions
            (`CurveBank.description`), except a run whose losses start exactly as the task's
            (its own run, where the episodes replay the reference); None: the history alone.
        config: the kind's fields, the windows compared and the neighbours read.
        weigher: a learned weighing of the base and each analog (`AnalogWeigher`, trained by
            `coreenv_lab.fm_training.weigher`); None: the fixed rule of `analogs.blend`.

    ``p_success`` is the base's. ``queries`` counts the answers given, ``fallbacks`` those the
    base gave alone, ``from_history`` those whose nearest analog was a finished task.
    """

    reads_context = True

    def __init__(
        self,
        base: Predictor,
        reference: CurveBank | None = None,
        config: AnalogConfig = IN_CONTEXT,
        weigher: AnalogWeigher | None = None,
    ) -> None:
        self.base = base
        self.config = config
        self.weigher = weigher
        self._reference_rows: dict[tuple, list[int]] = {}
        curves = []
        if reference is not None:
            for row in range(len(reference)):
                description = reference.description(row)
                for key in _keys(description, config.kind_fields):
                    self._reference_rows.setdefault(key, []).append(row)
                curves.append(reference.curve(row).losses)
        self._reference = Analogs(curves, [False] * len(curves))
        self.queries = self.fallbacks = self.from_history = 0

    def warm(self, prefixes: list[np.ndarray]) -> None:
        """Let the base sample these prefixes' futures ahead, if it can (`FMPredictor.warm`)."""
        warm = getattr(self.base, "warm", None)
        if warm is not None:
            warm(prefixes)

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """One task without context: the base's answer."""
        remaining, p_success = self.estimate_batch(
            [prefix], np.array([target]), np.array([budget]), [TaskContext(Description())]
        )
        return Estimate(float(remaining[0]), float(p_success[0]))

    def estimate_batch(
        self,
        prefixes: list[np.ndarray],
        targets: np.ndarray,
        budgets: np.ndarray,
        contexts: Sequence[TaskContext],
    ) -> tuple[np.ndarray, np.ndarray]:
        """The base's remaining batches, each blended with its analog; the base's P(success)."""
        remaining, p_success = estimate_many(self.base, prefixes, targets, budgets)
        samples = np.array(remaining, np.float64)[:, None]
        self._blend(samples, prefixes, targets, contexts)
        return samples[:, 0], p_success

    def sampled_crossings(
        self, prefixes: list[np.ndarray], targets: np.ndarray, contexts: Sequence[TaskContext]
    ) -> np.ndarray:
        """(B, S) the base's sampled futures (its estimate alone if it samples none), blended."""
        samples = futures(self.base, prefixes, targets)
        self._blend(samples, prefixes, targets, contexts)
        return samples

    def _blend(
        self,
        samples: np.ndarray,
        prefixes: list[np.ndarray],
        targets: np.ndarray,
        contexts: Sequence[TaskContext],
    ) -> None:
        """Move each task's samples towards what its analogs say, in place.

        By the rule of `analogs.answer` and `analogs.blend`, or, given a weigher, by its learned
        weights (`AnalogWeigher.reweigh`).
        """
        found = self.matches(prefixes, targets, contexts)
        if self.weigher is not None:
            self.fallbacks += sum(not matches for matches in found)
            self.weigher.reweigh(samples, prefixes, targets, found)
            return
        self.fallbacks += blend_each(samples, found, self.config.neighbours)

    def matches(
        self,
        prefixes: list[np.ndarray],
        targets: np.ndarray,
        contexts: Sequence[TaskContext],
    ) -> list[list[Match]]:
        """Each task's nearest analogs of the most specific kind that has any, nearest first.

        As many as the weigher reads (`AnalogWeigher.neighbours`), else ``config.neighbours``;
        none where no run of any of the task's kinds is long enough.
        """
        config = self.config
        if self.weigher is not None:
            config = replace(config, neighbours=self.weigher.neighbours)
        histories: dict[int, _History] = {}
        found = []
        for prefix, target, context in zip(prefixes, targets, contexts):
            self.queries += 1
            key = id(context.history)
            if key not in histories:
                histories[key] = _History(context.history, config.kind_fields)
            prefix = np.asarray(prefix, np.float64)
            found.append(self._matches(prefix, float(target), context, histories[key], config))
        return found

    def _matches(
        self,
        prefix: np.ndarray,
        target: float,
        context: TaskContext,
        history: _History,
        config: AnalogConfig,
    ) -> list[Match]:
        """The nearest analogs of the most specific of the task's kinds that has any."""
        for key in _keys(context.description, config.kind_fields):
            rows = self._not_replaying(prefix, self._reference_rows.get(key, []))
            mine = self._reference.nearest(prefix, target, config, rows)
            theirs = history.nearest(key, prefix, target, config)
            if mine or theirs:
                self.from_history += bool(theirs) and (
                    not mine or theirs[0].distance < mine[0].distance
                )
                return sorted(mine + theirs, key=lambda m: m.distance)[: config.neighbours]
        return []

    def _not_replaying(self, prefix: np.ndarray, rows: list[int]) -> np.ndarray:
        """``rows`` but the reference runs whose losses start exactly as ``prefix`` does.

        Such a run is the task's own run replayed (episodes drawn from the reference bank,
        as in training): a job cannot have been recorded before it ran.
        """
        rows = np.asarray(rows, np.int64)
        n = len(prefix)
        if rows.size == 0 or n > self._reference.log.shape[1]:
            return rows
        same = np.all(self._reference.log[rows, :n] == np.log(prefix), axis=1)
        return rows[~same]


class _History:
    """The finished tasks of one episode as `Analogs`, grouped by kind (every key of `_keys`)."""

    def __init__(self, history: Sequence[FinishedTask], fields: tuple[str, ...]) -> None:
        self._rows: dict[tuple, list[int]] = {}
        for i, task in enumerate(history):
            for key in _keys(task.description, fields):
                self._rows.setdefault(key, []).append(i)
        self._analogs = Analogs([task.losses for task in history], [True] * len(history))

    def nearest(
        self, key: tuple, prefix: np.ndarray, target: float, config: AnalogConfig
    ) -> list[Match]:
        rows = self._rows.get(key)
        return self._analogs.nearest(prefix, target, config, rows) if rows else []


def _keys(description: Description, fields: tuple[str, ...]) -> list[tuple]:
    """The kinds a description belongs to, most specific first: ``fields``, then fewer of them.

    A key holds ``(field, value)`` pairs of the fields the description has (so the RL runs,
    which have no optimizer, form kinds by family); none without the first field.
    """
    if fields[0] not in description.fields:
        return []
    keys = []
    for size in range(len(fields), 0, -1):
        key = tuple(
            (name, repr(description.fields[name]))
            for name in fields[:size]
            if name in description.fields
        )
        if key not in keys:
            keys.append(key)
    return keys
