"""A whole episode's tasks drawn at reset, as arrays, for `BatchedCore`.

Both engines draw an episode's tasks at reset with the scenario (`Scenario.draw_episode`, the one
drawer); here they are packed into arrays. A task needs its curve only through the logs of its
losses (by `math.log` like `State.train`, so that features match bit for bit) and its crossing,
the first batch whose loss is at or below the target (training stops there with a success): a
store keeps the logs of every curve in one flat float64 array, ``logs``, addressed by offsets.
Entry 0 of a store is `SENTINEL`, where empty slots point: log 0, the log of a loss of 1.

Two ways to draw:

* a `CurveBank` under Bernoulli arrivals (the default) is replayed from tables made once per bank:
  the scenario's arrival steps (`BernoulliArrivals.arrival_steps`), then the generator calls of
  `BernoulliArrivals.draw` and `CurveBank.sample` for row numbers instead of `Curve` objects,
  with targets found for all the episode's tasks at once (`BankCurves.targets`, the floats of
  `target_at_fraction`);
* anything else runs the scenario's `draw_episode` and copies each curve's logs into the lane's
  region of an `EpisodeCurves` store. A curve must then be a whole
  float64 losses array (as `Curve` documents): sources that train while tasks are served
  (``task_set="live"``) cannot be replayed.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from gymnasium.utils import seeding

from coreenv.config import EnvConfig
from coreenv.core.scenarios import BernoulliArrivals, Scenario
from coreenv.curves import Curve, CurveBank, CurveSource
from coreenv.errors import ConfigError

__all__ = ["SENTINEL", "BankCurves", "EpisodeCurves", "EpisodeDrawer", "EpisodeTasks"]

SENTINEL = 0
"""Store entry that no curve uses (log 0.0, a loss of 1): an empty slot's offset."""


@dataclass(frozen=True)
class EpisodeTasks:
    """Every task of one episode, in arrival order (task i is the uid i `transition` gives)."""

    arrival: np.ndarray  # (n,) int64 b_k, the step the task enters
    deadline: np.ndarray  # (n,) int64 d_k
    target: np.ndarray  # (n,) float64 epsilon_k
    feasible: np.ndarray  # (n,) int8: independently feasible 1, not 0, unknown demand -1
    crossing: np.ndarray  # (n,) int64 first n >= 1 with loss <= target (len(curve) if none)
    last: np.ndarray  # (n,) int64 len(curve) - 1, the most batches the curve allows
    offset: np.ndarray  # (n,) int64 where the curve starts in the store's flat arrays
    log_initial: np.ndarray  # (n,) float64 math.log(L_0)
    log_target: np.ndarray  # (n,) float64 math.log(epsilon)
    curves: Sequence[np.ndarray]  # each task's losses as `CoreEnv` holds them (predictor prefixes)
    shift: np.ndarray | None = None  # (B,) if the store grew: every lane's offsets moved by this

    @classmethod
    def none(cls) -> EpisodeTasks:
        """An episode without tasks (what an inactive lane holds)."""
        ints, floats = np.zeros(0, np.int64), np.zeros(0)
        return cls(ints, ints, floats, np.zeros(0, np.int8), ints, ints, ints, floats, floats, [])


def _logs(values: np.ndarray) -> np.ndarray:
    """``math.log`` of each value (numpy's SIMD log may differ from libm in the last bit)."""
    return np.array([math.log(v) for v in values.tolist()])


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
        self.logs[present] = _logs(losses[present])
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

    def place(self, lane: int, curves: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        """Write the logs of ``curves`` into ``lane``'s region.

        Returns their offsets, and each lane's shift if the store grew (else None).
        """
        lengths = np.array([len(curve) for curve in curves], np.int64)
        shift = self._grow(int(lengths.sum())) if lengths.sum() > self.capacity else None
        start = 1 + lane * self.capacity
        offsets = start + np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        if curves:
            values = np.concatenate(curves)
            self.logs[start : start + values.size] = _logs(values)
        return offsets, shift

    def _grow(self, needed: int) -> np.ndarray:
        old = self.capacity
        self.capacity = max(needed, 2 * old)
        grown = np.zeros((self.num_lanes, self.capacity))
        grown[:, :old] = self.logs[1:].reshape(self.num_lanes, old)
        self.logs = np.concatenate((self.logs[:1], grown.ravel()))
        return np.arange(self.num_lanes, dtype=np.int64) * (self.capacity - old)


class EpisodeDrawer:
    """Draws a lane's whole episode at reset, as `CoreEnv` would meet its tasks step by step.

    Attributes:
        store: where the curves' logs are (``logs``, a flat float64 array); it may hold a new
            array after a draw (read it after each `draw`).
    """

    def __init__(
        self, config: EnvConfig, scenario: Scenario, source: CurveSource, num_lanes: int
    ) -> None:
        self.config = config
        self.scenario = scenario
        self.source = source
        self.arrival_end = scenario.arrival_end()
        replays = _replays_bank(scenario, source)
        self.store = BankCurves.of(source) if replays else EpisodeCurves(num_lanes)

    def draw(self, lane: int, seed: int) -> EpisodeTasks:
        """The tasks of ``lane``'s new episode on ``seed`` (`CoreEnv.reset(seed=seed)`'s)."""
        if isinstance(self.store, BankCurves):
            return self._draw_bank(seed)
        return self._draw_any(lane, seed)

    def _draw_bank(self, seed: int) -> EpisodeTasks:
        """`BernoulliArrivals` on a `CurveBank`: its generator calls, in its order."""
        cfg = self.config
        rng = seeding.np_random(seed)[0]
        steps = self.scenario.arrival_steps(rng)
        rows, fractions, windows = _bank_draws(rng, len(steps), cfg, len(self.source))
        target, demand = self.store.targets(rows, fractions)
        offset = 1 + rows * self.store.width
        arrival = steps + 1
        return EpisodeTasks(
            arrival=arrival,
            deadline=arrival + windows,
            target=target,
            feasible=(demand <= cfg.batches_per_step * windows).astype(np.int8),
            crossing=demand,
            last=self.store.lengths[rows] - 1,
            offset=offset,
            log_initial=self.store.logs[offset],
            log_target=_logs(target),
            curves=RowCurves(self.store, rows),
        )

    def _draw_any(self, lane: int, seed: int) -> EpisodeTasks:
        """Any scenario and source: the scenario's own draws, curves copied."""
        drawn = self.scenario.draw_episode(seeding.np_random(seed)[0])
        arrival = [t + 1 for t, _ in drawn]
        draws = [draw for _, draw in drawn]
        curves = [self._losses_of(draw.curve) for draw in draws]
        target = np.array([draw.target for draw in draws], np.float64)
        windows = np.array([draw.window for draw in draws], np.int64)
        bound = self.config.batches_per_step * windows
        feasible = [
            -1 if draw.demand is None else int(draw.demand <= b) for draw, b in zip(draws, bound)
        ]
        offset, shift = self.store.place(lane, curves)
        arrival = np.array(arrival, np.int64)
        return EpisodeTasks(
            arrival=arrival,
            deadline=arrival + windows,
            target=target,
            feasible=np.array(feasible, np.int8),
            crossing=np.array(
                [_crossing(curve, draw.target) for curve, draw in zip(curves, draws)], np.int64
            ),
            last=np.array([len(curve) - 1 for curve in curves], np.int64),
            offset=offset,
            log_initial=self.store.logs[offset] if curves else np.zeros(0),
            log_target=_logs(target),
            curves=curves,
            shift=shift,
        )

    def _losses_of(self, curve: Curve) -> np.ndarray:
        """The curve's losses, if `BatchedCore` can replay them: a whole float64 array."""
        losses = curve.losses
        if not isinstance(losses, np.ndarray):
            raise ConfigError(
                f"BatchedCore cannot replay task set {self.source.name!r}: its curves are "
                f"{type(losses).__name__} objects produced while tasks train, not whole losses "
                "arrays drawn up front. Use CoreEnv for this task set."
            )
        if losses.dtype != np.float64:
            raise ConfigError(
                f"BatchedCore cannot replay task set {self.source.name!r}: it gave a "
                f"{losses.dtype} curve, and compares losses as float64 (Curve.losses is float64). "
                "Convert the curves in the source, or use CoreEnv."
            )
        return losses


def _bank_draws(
    rng: np.random.Generator, n: int, config: EnvConfig, curves: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, target fractions, deadline windows) of ``n`` tasks from a bank of ``curves`` rows.

    The generator calls of `BernoulliArrivals.draw` and `CurveBank.sample`, in their order.
    """
    integers, uniform = rng.integers, rng.uniform
    (low, high), (w_low, w_high) = config.target_fraction, config.deadline_window
    rows, fractions, windows = [], [], []
    for _ in range(n):  # curve (CurveBank.sample), target fraction, deadline window
        rows.append(integers(curves))
        fractions.append(uniform(low, high))
        windows.append(integers(w_low, w_high + 1))
    return np.array(rows, np.int64), np.array(fractions, np.float64), np.array(windows, np.int64)


def _replays_bank(scenario: Scenario, source: CurveSource) -> bool:
    """Whether the fast bank path gives exactly the scenario's draws (nothing is overridden)."""
    return (
        type(scenario) is BernoulliArrivals
        and isinstance(source, CurveBank)
        and type(source).sample is CurveBank.sample
        and type(source).target is CurveSource.target
    )


def _crossing(losses: np.ndarray, target: float) -> int:
    """First n >= 1 whose loss is <= target, else len(losses) (no batch reaches it)."""
    hits = np.flatnonzero(losses[1:] <= target)
    return int(hits[0]) + 1 if hits.size else len(losses)
