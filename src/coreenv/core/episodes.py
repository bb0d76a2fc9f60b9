"""A whole episode's tasks drawn at reset, as arrays, for `BatchedCore`.

Both engines draw an episode's tasks at reset with the scenario (`Scenario.draw_episode`, the one
drawer); here they are packed into arrays: each task's curve as an offset into a curve store
(`curve_stores`) and its crossing, the first batch whose loss is at or below the target
(training stops there with a success).

Two ways to draw:

* a `CurveBank` under Bernoulli arrivals (the default) is replayed from tables made once per bank:
  the scenario's arrival steps (`BernoulliArrivals.arrival_steps`), then the generator calls of
  `BernoulliArrivals.draw` and `CurveBank.sample` for row numbers instead of `Curve` objects
  (made in bulk where `draws.bulk_agrees`), with targets found for all the episode's tasks at
  once (`BankCurves.targets`, the floats of `target_at_fraction`);
* anything else runs the scenario's `draw_episode` and copies each curve's logs into the lane's
  region of an `EpisodeCurves` store. A curve must then be a whole float64 losses array (as
  `Curve` documents): sources that train while tasks are served (``task_set="live"``) cannot be
  replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from gymnasium.utils import seeding

from coreenv.config import EnvConfig
from coreenv.core.curve_stores import BankCurves, EpisodeCurves, RowCurves, logs_of
from coreenv.core.draws import TaskRanges, bulk_agrees, bulk_draws, scalar_draws
from coreenv.core.scenarios import BernoulliArrivals, Scenario
from coreenv.curves import Curve, CurveBank, CurveSource
from coreenv.errors import ConfigError

__all__ = ["EpisodeDrawer", "EpisodeTasks"]


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
        if _replays_bank(scenario, source):
            self.store: BankCurves | EpisodeCurves = BankCurves.of(source)
            self._choose_bank_draws()
        else:
            self.store = EpisodeCurves(num_lanes)

    def _choose_bank_draws(self) -> None:
        """What the bank replay draws from, and whether bulk draws agree with the calls here."""
        cfg = self.config
        self.ranges = TaskRanges(len(self.source), cfg.target_fraction, cfg.deadline_window)
        self.bulk = bulk_agrees(self.ranges)

    def draw(self, lane: int, seed: int) -> EpisodeTasks:
        """The tasks of ``lane``'s new episode on ``seed`` (`CoreEnv.reset(seed=seed)`'s)."""
        if isinstance(self.store, BankCurves):
            return self._draw_bank(seed)
        return self._draw_any(lane, seed)

    def _draw_bank(self, seed: int) -> EpisodeTasks:
        """`BernoulliArrivals` on a `CurveBank`: its generator calls, in its order.

        In bulk where `draws.bulk_agrees`: one by one, they are 18% of the batched engine's
        stepping at 256 lanes (docs/design.md, *Speed*).
        """
        cfg = self.config
        rng = seeding.np_random(seed)[0]
        steps = self.scenario.arrival_steps(rng)
        draws = bulk_draws(rng, len(steps), self.ranges) if self.bulk else None
        if draws is None:  # one by one, from the start
            rng = seeding.np_random(seed)[0]
            self.scenario.arrival_steps(rng)
            draws = scalar_draws(rng, len(steps), self.ranges)
        rows, fractions, windows = draws
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
            log_target=logs_of(target),
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
            log_target=logs_of(target),
            curves=curves,
            shift=shift,
        )

    def __getstate__(self) -> dict:
        """Pickled without the bank draws' settings: they are chosen again where it is unpickled."""
        return {k: v for k, v in self.__dict__.items() if k not in ("ranges", "bulk")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if isinstance(self.store, BankCurves):
            self._choose_bank_draws()

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
