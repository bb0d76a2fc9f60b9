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
  region of an `EpisodeCurves` store. A curve whose losses are not an array (a live run, which
  trains while its task is served: ``task_set="live"``) brings only its initial loss; the rest
  is read when served (`Lanes.reveal`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from coreenv.config import EnvConfig
from coreenv.context import Description, FinishedTask, category_ids
from coreenv.episodes.curve_stores import BankCurves, EpisodeCurves, RowCurves, logs_of
from coreenv.episodes.draws import TaskRanges, bulk_agrees, bulk_draws, scalar_draws
from coreenv.episodes.scenarios import BernoulliArrivals, Scenario
from coreenv.episodes.tasks import NEVER
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
    crossing: np.ndarray  # (n,) int64 first n >= 1 with loss <= target (len(curve) if none,
    # NEVER while a live run's is unknown)
    last: np.ndarray  # (n,) int64 len(curve) - 1, the most batches the curve allows
    offset: np.ndarray  # (n,) int64 where the curve starts in the store's flat arrays
    initial: np.ndarray  # (n,) float64 L_0
    log_initial: np.ndarray  # (n,) float64 math.log(L_0)
    log_target: np.ndarray  # (n,) float64 math.log(epsilon)
    curves: Sequence  # each task's losses as its curve holds them (predictor prefixes)
    shift: np.ndarray | None = None  # (B,) if the store grew: every lane's offsets moved by this
    descriptions: Sequence[Description] | None = None  # what each task is (information model)
    categories: np.ndarray | None = None  # (n, C) their category ids (`context.category_ids`)
    warm: tuple[FinishedTask, ...] = ()  # what the history starts with (EnvConfig.warm_history)


class EpisodeDrawer:
    """Draws a lane's whole episode at reset: the scenario's tasks, packed for `Lanes`.

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
        self.live = False  # set once a drawn curve is a live run (`Lanes.reveal` trains it)
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

    def draw(self, lane: int, rng: np.random.Generator) -> EpisodeTasks:
        """The tasks of ``lane``'s new episode, drawn from ``rng`` (`Scenario.draw_episode`'s).

        Past ``information="prefix"`` each task also has its description and category ids.
        """
        if isinstance(self.store, BankCurves):
            tasks, rows = self._draw_bank(rng)
            if self.config.information == "prefix":
                return tasks
            descriptions = [self.source.description(row) for row in rows.tolist()]
        else:
            tasks, curves = self._draw_any(lane, rng)
            if self.config.information == "prefix":
                return tasks
            descriptions = [self.source.describe(curve) for curve in curves]
        categories = category_ids(descriptions, self.config.kind_fields)
        warm = tuple(self._warm_task(rng) for _ in range(self.config.warm_history))
        return dataclasses.replace(
            tasks, descriptions=descriptions, categories=categories, warm=warm
        )

    def _warm_task(self, rng: np.random.Generator) -> FinishedTask:
        """A task of an earlier episode, trained alone: to its target, or until its window ran out.

        Drawn as `BernoulliArrivals.draw` draws a task; it finished by step 0.
        """
        cfg = self.config
        curve = self.source.sample(rng)
        losses = curve.losses
        if not isinstance(losses, np.ndarray):
            raise ConfigError(
                f"EnvConfig.warm_history needs recorded curves; task set {self.source.name!r} "
                "gives live runs."
            )
        target, _ = self.source.target(curve, rng.uniform(*cfg.target_fraction))
        window = int(rng.integers(cfg.deadline_window[0], cfg.deadline_window[1] + 1))
        allowed = min(cfg.batches_per_step * window, len(losses) - 1)
        crossing = _crossing(losses, target)
        trained = min(crossing, allowed)
        return FinishedTask(
            description=self.source.describe(curve),
            losses=np.asarray(losses[: trained + 1], np.float64),
            target=float(target),
            completed=bool(crossing <= allowed),
            arrival=-window,
            deadline=0,
            ended=0,
        )

    def _draw_bank(self, rng: np.random.Generator) -> tuple[EpisodeTasks, np.ndarray]:
        """`BernoulliArrivals` on a `CurveBank`: its generator calls, in its order.

        In bulk where `draws.bulk_agrees`: one by one, they are 18% of the batched engine's
        stepping at 256 lanes (docs/design.md, *Speed*).
        """
        cfg = self.config
        steps = self.scenario.arrival_steps(rng)
        draws = None
        if self.bulk:
            before = rng.bit_generator.state
            draws = bulk_draws(rng, len(steps), self.ranges)
            if draws is None:  # one by one, from where the bulk draw started
                rng.bit_generator.state = before
        if draws is None:
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
            initial=self.store.initial[rows],
            log_initial=self.store.logs[offset],
            log_target=logs_of(target),
            curves=RowCurves(self.store, rows),
        ), rows

    def _draw_any(
        self, lane: int, rng: np.random.Generator
    ) -> tuple[EpisodeTasks, Sequence[Curve]]:
        """Any scenario and source: the scenario's own draws, curves copied.

        A live run's losses (not an array) are read when its task is served (`Lanes.reveal`):
        only its initial loss is copied, and its crossing is NEVER until found.
        """
        drawn = self.scenario.draw_episode(rng)
        arrival = [t + 1 for t, _ in drawn]
        draws = [draw for _, draw in drawn]
        curves = [draw.curve.losses for draw in draws]
        known = [
            np.asarray(c, np.float64) if isinstance(c, np.ndarray) else np.array([c[0]], np.float64)
            for c in curves
        ]
        self.live |= any(not isinstance(c, np.ndarray) for c in curves)
        target = np.array([draw.target for draw in draws], np.float64)
        windows = np.array([draw.window for draw in draws], np.int64)
        bound = self.config.batches_per_step * windows
        feasible = [
            -1 if draw.demand is None else int(draw.demand <= b) for draw, b in zip(draws, bound)
        ]
        lengths = np.array([len(curve) for curve in curves], np.int64)
        offset, shift = self.store.place(lane, known, lengths)
        arrival = np.array(arrival, np.int64)
        return EpisodeTasks(
            arrival=arrival,
            deadline=arrival + windows,
            target=target,
            feasible=np.array(feasible, np.int8),
            crossing=np.array(
                [
                    _crossing(values, draw.target) if values.size == size else NEVER
                    for values, size, draw in zip(known, lengths.tolist(), draws)
                ],
                np.int64,
            ),
            last=lengths - 1,
            offset=offset,
            initial=np.array([values[0] for values in known], np.float64),
            log_initial=self.store.logs[offset] if curves else np.zeros(0),
            log_target=logs_of(target),
            curves=curves,
            shift=shift,
        ), [draw.curve for draw in draws]

    def __getstate__(self) -> dict:
        """Pickled without the bank draws' settings: they are chosen again where it is unpickled."""
        return {k: v for k, v in self.__dict__.items() if k not in ("ranges", "bulk")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if isinstance(self.store, BankCurves):
            self._choose_bank_draws()


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
