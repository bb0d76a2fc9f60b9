"""A predictor told each task's kind, for a diagnostic of what the kind is worth (docs/mara.md).

The environment does not tell a scheduler what a task is. `KindAnalog` prices that: it looks the
task's run up in the bank the episode replays (as `ClairvoyantPredictor` does) only to read its
kind, named by fields of the run's config (``family``, ``optimizer``, ...); never its future.
Among the reference runs of that kind (training runs) it finds the one whose revealed losses
match the prefix best, up to a constant factor, and reads when that run, scaled by the same
factor, reaches the target; a task's own run is never its analog (the reference may be the bank
the episodes replay: what the other runs of a kind tell). The answer is the geometric mean of
that and the base predictor's estimate; ``p_success`` is the base predictor's. Its sampled
futures, for `HOP`, are the base predictor's, scaled so that their median is the blend of it
with the analog.
"""

from __future__ import annotations

import json

import numpy as np

from coreenv import Predictor, estimate_many
from coreenv.curves import CurveBank
from coreenv_lab.diagnostics.clairvoyant import ClairvoyantPredictor
from coreenv_lab.predictors.analogs import AnalogConfig, Analogs, Answer, answer, blend, futures
from mara_agents.predictors.batched import BatchPredictor

__all__ = ["AnalogConfig", "KindAnalog", "kind_of"]

BY_FAMILY = AnalogConfig()
"""`KindAnalog`'s default: kinds named by the family alone."""


class KindAnalog(BatchPredictor):
    """``base``'s estimates blended with the nearest ``reference`` run of the task's kind.

    Args:
        reference: the runs read for analogs: training runs, or ``episodes`` itself (each task's
            own run left out).
        episodes: the bank the episodes replay; a prefix is looked up there for its run's kind.
        base: the predictor blended with. It answers alone where there is no analog (a prefix
            of no run of ``episodes``, or of runs of several kinds; no reference run of that
            kind longer than the prefix) and where the analog never reaches the target within
            its recorded length.

    ``queries`` counts the answers given (a task asked twice, or through both `estimate_batch`
    and `sampled_crossings`, counts twice); ``fallbacks`` those ``base`` gave alone.
    """

    def __init__(
        self,
        reference: CurveBank,
        episodes: CurveBank,
        base: Predictor,
        config: AnalogConfig = BY_FAMILY,
    ) -> None:
        self.config = config
        self.base = base
        fields = config.kind_fields
        self._reference_rows: dict[tuple, list[int]] = {}  # the reference runs of each kind
        for row, text in enumerate(reference.config):
            self._reference_rows.setdefault(kind_of(text, fields, reference.name), []).append(row)
        self._episode_kinds = [kind_of(text, fields, None) for text in episodes.config]
        self._lookup = ClairvoyantPredictor(episodes)
        copies: dict[bytes, list[int]] = {}
        for row in range(len(reference)):
            copies.setdefault(reference.curve(row).losses.tobytes(), []).append(row)
        self._own = [
            copies.get(episodes.curve(r).losses.tobytes(), []) for r in range(len(episodes))
        ]
        self._analogs = Analogs(
            [reference.curve(r).losses for r in range(len(reference))], [False] * len(reference)
        )
        self.fallbacks = 0
        self.queries = 0

    def estimate_batch(
        self, prefixes: list[np.ndarray], targets: np.ndarray, budgets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``base``'s answers, each remaining count blended with its analog's where one is found."""
        remaining, p_success = estimate_many(self.base, prefixes, targets, budgets)
        blended = self._blend(np.array(remaining, np.float64)[:, None], prefixes, targets)
        return blended[:, 0], p_success

    def sampled_crossings(self, prefixes: list[np.ndarray], targets: np.ndarray) -> np.ndarray:
        """(B, S) ``base``'s sampled futures (its estimate alone if it samples none), blended.

        Each task's samples are scaled by one factor, which takes their own median to the
        blend of that median with the analog: what `HOP` plans on.
        """
        return self._blend(futures(self.base, prefixes, targets), prefixes, targets)

    def _blend(
        self, samples: np.ndarray, prefixes: list[np.ndarray], targets: np.ndarray
    ) -> np.ndarray:
        """(B, S) each task's samples scaled to a median that blends theirs with the analog's.

        The blend is the geometric mean of the two, each at least 1 batch; the analog's answer
        alone where the median is never; the samples unchanged where there is no analog, or
        the analog says never.
        """
        for i, (prefix, target) in enumerate(zip(prefixes, targets)):
            self.queries += 1
            if not blend(samples[i], self._analog(np.asarray(prefix, np.float64), float(target))):
                self.fallbacks += 1
        return samples

    def _analog(self, prefix: np.ndarray, target: float) -> Answer | None:
        """What the nearest reference runs of the prefix's kind (not its own run) say, or None."""
        starts = self._lookup.rows_of(prefix)
        kind = self._kind(starts)
        if kind is None:
            return None
        own = {row for start in starts for row in self._own[start]}
        rows = [r for r in self._reference_rows.get(kind, []) if r not in own]
        nearest = self._analogs.nearest(prefix, target, self.config, rows)
        return answer(nearest, self.config.neighbours)

    def _kind(self, starts: list[int]) -> tuple | None:
        """The kind of the runs of ``episodes`` a prefix starts; None if none or several."""
        kinds = {self._episode_kinds[row] for row in starts}
        return kinds.pop() if len(kinds) == 1 else None


def kind_of(config: str, fields: tuple[str, ...], bank: str | None) -> tuple | None:
    """The values of ``fields`` in a run's JSON config.

    A missing field is a ValueError naming the field and the bank when ``bank`` is given (the
    reference runs must all have a kind); otherwise the run has no kind (None).
    """
    values = json.loads(config)
    missing = [field for field in fields if field not in values]
    if not missing:
        return tuple(values[field] for field in fields)
    if bank is None:
        return None
    raise ValueError(
        f"KindAnalog: a run of the reference bank {bank!r} has no config field {missing[0]!r}; "
        f"its fields: {sorted(values)}."
    )
