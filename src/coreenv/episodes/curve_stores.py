"""Where the batched engine reads curves: each as the logs of its losses in one flat array.

A task needs its curve only through the logs of its losses (by `math.log` like `State.train`,
so that features match bit for bit): a store keeps the logs of every curve in one flat float64
array, ``logs``, addressed by offsets. Entry 0 of a store is `SENTINEL`, where empty slots
point: log 0, the log of a loss of 1. A `CurveBank` replayed under Bernoulli arrivals is one
store, made once per bank (`BankCurves`, with tables that find many targets at once); any
other source's curves are copied into each lane's region of an `EpisodeCurves` store.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence

import numpy as np

from coreenv.curves import CurveBank

__all__ = ["SENTINEL", "BankCurves", "EpisodeCurves", "RowCurves", "logs_of"]

SENTINEL = 0
"""Store entry that no curve uses (log 0.0, a loss of 1): an empty slot's offset."""


class BankCurves:
    """A bank's log-losses, flat (row r's after n batches is ``logs[1 + r * width + n]``).

    With tables that find the targets of many draws at once; made once per bank (`of`).
    """

    _made: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __init__(self, bank: CurveBank) -> None:
        self.bank = bank
        self.width = bank.losses.shape[1]
        losses = np.concatenate(([1.0], bank.losses.ravel()))  # after the sentinel
        present = ~np.isnan(losses)
        self.logs = np.full(losses.shape, np.nan)
        self.logs[present] = logs_of(losses[present])
        self.lengths = bank.lengths.astype(np.int64)
        self.initial = bank.losses[:, 0]
        # running_min[r, n - 1] = min(L_r[1..n]), and where its run of equal values starts
        # (NaN past a row's end compares false and unequal: it never matters)
        self.running_min = np.minimum.accumulate(bank.losses[:, 1:], axis=1)
        columns = np.arange(self.running_min.shape[1])
        new_value = np.ones(self.running_min.shape, bool)
        new_value[:, 1:] = self.running_min[:, 1:] != self.running_min[:, :-1]
        self.run_start = np.maximum.accumulate(np.where(new_value, columns, 0), axis=1)
        self.first_drop = np.argmax(bank.losses[:, 1:] < self.initial[:, None], axis=1) + 1
        self.rows = [bank.curve(i).losses for i in range(len(bank))]

    @classmethod
    def of(cls, bank: CurveBank) -> BankCurves:
        """The tables of ``bank``, made on first use (a bank is read-only)."""
        if bank not in cls._made:
            cls._made[bank] = cls(bank)
        return cls._made[bank]

    def __reduce__(self) -> tuple:
        """Pickled as its bank: the tables are made again from it."""
        return BankCurves.of, (self.bank,)

    def targets(self, rows: np.ndarray, fractions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`target_at_fraction` of rows ``rows`` at ``fractions``: (targets, demands), same floats.

        The target is the running minimum at index ``max(1, round(fraction · (len - 1)))``, or at
        the curve's first drop below its initial loss when that minimum is not below it; the
        demand is where that running minimum was first reached.
        """
        index = np.maximum(np.rint(fractions * (self.lengths[rows] - 1)).astype(np.int64), 1)
        rising = self.running_min[rows, index - 1] >= self.initial[rows]
        index = np.where(rising, self.first_drop[rows], index)
        return self.running_min[rows, index - 1], self.run_start[rows, index - 1] + 1


class RowCurves(Sequence):
    """The curves of an episode's tasks replayed from a bank: ``rows[i]``'s losses for task i.

    What a list of the curves would hold, pickled as row numbers and the bank.
    """

    def __init__(self, bank: BankCurves, rows: np.ndarray) -> None:
        self.bank, self.rows = bank, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, task: int) -> np.ndarray:
        return self.bank.rows[self.rows[task]]


class EpisodeCurves:
    """The log-losses of each lane's current episode's curves, one region per lane.

    A region is overwritten when its lane starts a new episode; the store grows (moving every
    region) when an episode needs more room than a region has.
    """

    def __init__(self, num_lanes: int) -> None:
        self.num_lanes = num_lanes
        self.capacity = 0
        self.logs = np.zeros(1)  # the sentinel, then the regions

    def place(
        self, lane: int, curves: list[np.ndarray], lengths: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Write the logs of ``curves`` into ``lane``'s region, ``lengths`` entries each.

        A curve shorter than its length (a live run's known losses) leaves the rest NaN, to be
        written when revealed. Returns the offsets, and each lane's shift if the store grew.
        """
        total = int(lengths.sum())
        shift = self._grow(total) if total > self.capacity else None
        start = 1 + lane * self.capacity
        offsets = start + np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        if curves:
            region = self.logs[start : start + total]
            region[:] = np.nan
            for offset, values in zip((offsets - start).tolist(), curves):
                region[offset : offset + values.size] = logs_of(values)
        return offsets, shift

    def _grow(self, needed: int) -> np.ndarray:
        old = self.capacity
        self.capacity = max(needed, 2 * old)
        grown = np.zeros((self.num_lanes, self.capacity))
        grown[:, :old] = self.logs[1:].reshape(self.num_lanes, old)
        self.logs = np.concatenate((self.logs[:1], grown.ravel()))
        return np.arange(self.num_lanes, dtype=np.int64) * (self.capacity - old)


def logs_of(values: np.ndarray) -> np.ndarray:
    """``math.log`` of each value (numpy's SIMD log may differ from libm in the last bit)."""
    return np.array([math.log(v) for v in values.tolist()])
