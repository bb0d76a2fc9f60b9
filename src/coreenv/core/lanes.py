"""`Lanes`: the state of B episodes ("lanes") as a few arrays, what `engine.step` advances.

What the lanes know of their tasks is their `memory.Memory`; the predictor's estimates are
written into them by `estimates.Estimates`.

`BatchedCore` holds B lanes (`CoreEnv` one). Slots are addressed by flat indices
``lane * K + slot`` (lanes in order); what a task brings into a slot is packed into one record,
copied when the slot fills. The rows and columns of every array are named in `engine`. An
empty slot holds `engine.EMPTY_INTS` and `engine.EMPTY_FLOATS` and points at the curve store's
`SENTINEL`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core import engine as e
from coreenv.episodes.drawer import EpisodeTasks
from coreenv.core.features import (
    NO_PREDICTOR,
    cluster_columns,
    entering_rows,
    estimate_columns,
    observation_size,
    slot_width,
)
from coreenv.core.memory import Memory
from coreenv.core.metrics import Counters
from coreenv.core.views import SchedulerView

__all__ = ["RECORD_ROW", "Lanes"]

RECORD_ROW = e.RECORD_INTS + e.RECORD_FLOATS  # where a task record's feature row starts
_RECORD_INTS = ("crossing", "last", "offset", "arrival", "deadline")  # then the task's index


class Lanes:
    """B lanes of one config: their clocks, queues, counters, slots and episode tasks.

    Attributes:
        lane: (B, `engine.LANE_COLUMNS`) int64, each lane's clock, queue, counters, and what its
            last step gave.
        returns: (B, 2) float64, each lane's shaping potential and last reward.
        slot_ints, slot_floats: (`engine.SLOT_INT_ROWS`, B·K) int64 and (9, B·K) float64
            per-slot data.
        table: (B·K, F) float64 slot features (float32 once observed); the time left is kept by
            subtracting ``slot_floats[SLOT_SCALE]`` each step.
        mask: (B, K + 2) int8: per lane the occupied slots, idle (always 1) and a column always
            0 (where out-of-range actions point).
        task_ints: (`engine.TASK_ROWS`, B, W) int64 each lane's episode tasks (arrival,
            deadline, waiting, feasible: 1, 0, or -1 for an unknown demand; then how it ended,
            its batches trained and the step it left); column n (one past a lane's last task)
            and beyond are padding: arrival NEVER, not waiting, so a lookup one past the end
            needs no bounds check.
        records: (B, W, R) float64: what a slot takes from a task when it fills (`engine`'s
            record layout, ints exact as floats).
        curves: ``curves[lane][i]`` is task i's losses (an array, or a live run's losses).
        memory: what the lanes know of their tasks (`Memory`: descriptions, finished tasks).
        new_estimate: what an entering task's estimate features read (`Estimates.attach`).
        settings, scales: the config's step settings for `engine.step` (int64, float64).
        obs_shape: (B, M, D), the shape of the lanes' node observations.
        state_shape: (B, 1, S), the shape of their states, as `engine.step` writes them.
    """

    def __init__(self, num_lanes: int, config: EnvConfig, arrival_end: int, max_steps: int):
        b, k, width = num_lanes, config.num_slots, slot_width(config)
        self.num_lanes, self.num_slots = b, k
        self.obs_shape = (b, config.num_nodes, observation_size(config))
        self.state_shape = (b, 1, observation_size(config) - config.num_nodes)
        self.ready = np.empty(b * config.num_nodes, np.int64)  # the slots a step re-estimates
        self.lane = np.zeros((b, e.LANE_COLUMNS), np.int64)
        self.lane[:, [e.NEXT_ARRIVAL, e.WAITING_DEADLINE]] = e.NEVER
        self.returns = np.zeros((b, 2))
        self.slot_ints = np.repeat(e.EMPTY_INTS[:, None], b * k, axis=1)
        self.slot_floats = np.repeat(e.EMPTY_FLOATS[:, None], b * k, axis=1)
        self.table = np.zeros((b * k, width))
        self.mask = np.zeros((b, k + 2), np.int8)
        self.mask[:, k] = 1  # idle is always allowed
        self.record_size = RECORD_ROW + width
        self.task_ints = np.zeros((e.TASK_ROWS, b, 0), np.int64)
        self.records = np.zeros((b, 0, self.record_size))
        self._widen(1)
        self.curves: list[Sequence] = [[] for _ in range(b)]
        self.memory = Memory(self, config.information == "history")
        self.estimate_columns = estimate_columns(config)
        self.new_estimate = NO_PREDICTOR
        self.settings = np.array(
            [
                config.batches_per_step,
                config.min_prefix,
                config.admission == "edf",
                0,  # GUARD: set once a task's target is not below its initial loss
                arrival_end,
                max_steps,
                config.switch_cost,
                cluster_columns(config).start if config.cluster_shown else -1,
                *config.speeds,
            ],
            np.int64,
        )
        time_scale = float(config.time_scale)
        self.scales = np.array(
            [
                time_scale * config.batches_per_step,
                time_scale,
                config.shaping_beta,
                config.arrival_horizon,
            ]
        )

    @property
    def occupied(self) -> np.ndarray:
        """(B, K) bool, which slots hold a task: a view of the mask."""
        return self.mask[:, : self.num_slots].view(bool)

    def step(
        self,
        chosen: np.ndarray,
        takes: np.ndarray,
        claim: bool,
        logs: np.ndarray,
        states: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """`engine.step` on every lane: their observations and the slots to re-estimate.

        The observations are (B, M, D) float32, or (B, S) states if ``states``; the flat slots a
        view, valid until the next step.
        """
        obs = np.empty(self.state_shape if states else self.obs_shape, np.float32)
        # the arguments named, not `engine_arrays` unpacked: CoreEnv pays this call every step
        ready = e.step(
            chosen, takes, claim, obs, self.ready, self.lane, self.returns, self.slot_ints,
            self.slot_floats, self.table, self.mask, self.task_ints, self.records, logs,
            self.settings, self.scales,
        )  # fmt: skip
        return (obs[:, 0] if states else obs), self.ready[:ready]

    def engine_arrays(self) -> tuple[np.ndarray, ...]:
        """The state `engine.step` advances, in its argument order: ``lane`` to ``records``."""
        return (
            self.lane,
            self.returns,
            self.slot_ints,
            self.slot_floats,
            self.table,
            self.mask,
            self.task_ints,
            self.records,
        )

    # -- episodes ---------------------------------------------------------------------------------

    def _widen(self, width: int) -> None:
        """Widen the task tables to ``width`` columns, keeping what they hold."""
        old = self.task_ints.shape[2]
        ints = np.zeros((e.TASK_ROWS, self.num_lanes, width), np.int64)
        ints[e.TASK_ARRIVAL] = e.NEVER
        ints[:, :, :old] = self.task_ints
        records = np.zeros((self.num_lanes, width, self.record_size))
        records[:, :old] = self.records
        self.task_ints, self.records = ints, records

    def start(self, lane: int, episode: EpisodeTasks) -> None:
        """Start ``lane`` on ``episode`` at t = 0: its slots empty, none of its tasks arrived."""
        if episode.shift is not None:  # the curve store grew: every region moved
            self.shift_offsets(episode.shift)
        self.stop(lane)
        n = len(episode.arrival)
        if n + 1 > self.task_ints.shape[2]:
            self._widen(max(n + 1, 2 * self.task_ints.shape[2]))
        ints = self.task_ints[:, lane]
        ints[:, n:] = 0
        ints[e.TASK_ARRIVAL, :n], ints[e.TASK_ARRIVAL, n:] = episode.arrival, e.NEVER
        ints[e.TASK_DEADLINE, :n] = episode.deadline
        ints[e.TASK_FEASIBLE, :n] = episode.feasible
        self.records[lane, :n] = _records(
            episode, self.estimate_columns, self.new_estimate, self.record_size
        )
        self.records[lane, n:] = 0.0
        self.lane[lane, [e.NEXT_ARRIVAL, e.ACTIVE]] = ints[e.TASK_ARRIVAL, 0], 1
        self.curves[lane] = episode.curves
        self.memory.start(lane, episode)
        if not (episode.log_target < episode.log_initial).all():
            self.settings[e.GUARD] = 1

    def stop(self, lane: int) -> None:
        """Empty ``lane``: its slots freed, its counters and clock 0, no tasks (inactive)."""
        k = self.num_slots
        for j in np.flatnonzero(self.occupied[lane]).tolist():
            e.clear_slot(
                lane * k + j, self.lane, self.slot_ints, self.slot_floats, self.table, self.mask
            )
        version = self.lane[lane, e.VERSION]
        self.lane[lane] = 0
        self.lane[lane, [e.NEXT_ARRIVAL, e.WAITING_DEADLINE, e.VERSION]] = e.NEVER, e.NEVER, version
        self.returns[lane] = 0.0
        self.task_ints[:, lane] = 0
        self.task_ints[e.TASK_ARRIVAL, lane] = e.NEVER
        self.curves[lane] = []
        self.memory.start(lane, None)

    def shift_offsets(self, shift: np.ndarray) -> None:
        """The curve store moved lane b's curves by ``shift[b]``."""
        self.records[:, :, e.OFFSET - e.CROSSING] += shift[:, None]
        moved = np.repeat(shift, self.num_slots) * self.occupied.reshape(-1)  # not the sentinel
        self.slot_ints[e.OFFSET] += moved

    def served(self, chosen: np.ndarray, takes: np.ndarray) -> np.ndarray:
        """(B, M) the task each node trains by its claims ``takes`` (`engine.EMPTY`: none)."""
        k = self.num_slots
        flat = np.arange(self.num_lanes)[:, None] * k + np.minimum(chosen, k - 1)
        return np.where(takes, self.slot_ints[e.INDEX, flat], e.EMPTY)

    def reveal(self, chosen: np.ndarray, takes: np.ndarray, logs: np.ndarray) -> None:
        """Train the live runs the nodes serve this step, before `engine.step` reads their logs.

        The one rule not compiled, since a live run trains in Python: a served run's losses are
        read batch by batch up to the step's stop or its first loss at or below the target
        (where its crossing is then set), and their logs written into the store.
        """
        k, batches = self.num_slots, int(self.settings[e.BATCHES])
        ints = self.slot_ints
        for b, i in zip(*np.nonzero(takes)):
            j = b * k + chosen[b, i]
            losses = self.curves[b][ints[e.INDEX, j]]
            if isinstance(losses, np.ndarray):
                continue
            start, last = int(ints[e.CURSOR, j]), int(ints[e.LAST, j])
            target, offset = self.slot_floats[e.TARGET, j], int(ints[e.OFFSET, j])
            for n in range(start + 1, min(start + batches, last) + 1):
                loss = float(losses[n])
                logs[offset + n] = math.log(loss)
                if loss <= target:
                    ints[e.CROSSING, j] = n
                    break

    # -- what the lanes show ----------------------------------------------------------------------

    def observe(self, which: np.ndarray, states: bool = False) -> np.ndarray:
        """(len(which), M, D) float32 node observations of lanes ``which`` (`engine.observe_rows`).

        (len(which), S) states instead if ``states``.
        """
        shape = self.state_shape if states else self.obs_shape
        obs = np.empty((len(which), *shape[1:]), np.float32)
        e.observe_rows(obs, which, self.lane, self.table, self.settings, self.scales[e.HORIZON])
        return obs[:, 0] if states else obs

    def view(
        self,
        config: EnvConfig,
        shown: tuple[np.ndarray, np.ndarray],
        episodes: np.ndarray,
        seeds: np.ndarray,
        estimates: bool,
        clairvoyant: bool,
    ) -> SchedulerView:
        """Every lane's episode as a `SchedulerView` (E = B), what both shells give.

        ``shown``: the (B, M, D) observations and (B, K + 1) masks last shown; ``episodes`` and
        ``seeds``: (B,) each episode's number and seed (-1: none); ``estimates``: whether a
        predictor is attached; ``clairvoyant``: add the hidden truth (for the oracle and tests).
        """
        ints, memory = self.slot_ints.reshape(-1, self.num_lanes, self.num_slots), self.memory
        raw = self.slot_floats[e.EST_REMAINING :].reshape(2, self.num_lanes, self.num_slots)
        return SchedulerView(
            configs=(config,) * self.num_lanes,
            obs=shown[0],
            action_mask=shown[1],
            t=self.lane[:, e.T].copy(),
            waiting=self.lane[:, e.NUM_WAITING].copy(),
            occupied=self.occupied.copy(),
            uid=ints[e.INDEX].copy(),
            arrival=ints[e.ARRIVAL].copy(),
            deadline=ints[e.DEADLINE].copy(),
            batches=ints[e.CURSOR].copy(),
            target=self.slot_floats[e.TARGET].reshape(self.num_lanes, -1).copy(),
            estimates=np.stack(raw, axis=-1) if estimates else None,
            episode=episodes.copy(),
            seed=seeds.copy(),
            curves=list(self.curves),
            descriptions=list(memory.descriptions) if any(memory.descriptions) else (),
            histories=[memory.history(b) for b in range(self.num_lanes)] if memory.remembers else (),
            remaining=self.remaining() if clairvoyant else None,
            last_node=ints[e.NODE].copy(),
            resume_cost=self.resume_cost(config.switch_cost),
        )

    def resume_cost(self, switch_cost: int) -> np.ndarray:
        """(B, K) steps each slot's task would lose on its last node at the next step."""
        ints = self.slot_ints.reshape(-1, self.num_lanes, self.num_slots)
        continued = ints[e.TRAINED_AT] == self.lane[:, e.T, None]
        cost = np.where(continued, ints[e.RESTORING], switch_cost)
        return np.where(ints[e.NODE] >= 0, cost, 0)

    def remaining(self) -> np.ndarray:
        """(B, K) true remaining batches of each slot's task (-1 if unknowable, 0 if empty)."""
        left = self.slot_ints[e.CROSSING] - self.slot_ints[e.CURSOR]
        left = np.where(self.occupied.reshape(-1), left, 0).reshape(self.occupied.shape)
        uid = np.maximum(self.slot_ints[e.INDEX].reshape(self.occupied.shape), 0)
        feasible = np.take_along_axis(self.task_ints[e.TASK_FEASIBLE], uid, axis=1)
        left[(feasible < 0) & self.occupied] = -1
        return left

    def counters(self, lane: int) -> Counters:
        """The design §2 counters of ``lane``'s episode so far."""
        feasible = self.task_ints[e.TASK_FEASIBLE, lane, : self.lane[lane, e.NEXT]]
        counted = self.lane[lane, e.BUSY : e.SWITCH_STEPS + 1].tolist()
        return Counters(
            arrivals=int(feasible.size),
            feasible=int((feasible == 1).sum()),
            unknown_demand=int((feasible < 0).sum()),
            steps=int(self.lane[lane, e.T]),
            **dict(zip(e.COUNTED, counted)),
        )

    def waiting(self, lane: int) -> np.ndarray:
        """The task numbers of ``lane``'s waiting tasks, in arrival order."""
        return np.flatnonzero(self.task_ints[e.TASK_WAITING, lane])


def _records(episode: EpisodeTasks, estimates: slice, estimate: float, size: int) -> np.ndarray:
    """(n, R = ``size``) the records of ``episode``'s tasks (`engine`'s layout).

    Their ``estimates`` columns are ``estimate``.
    """
    n = len(episode.arrival)
    records = np.zeros((n, size))
    for i, name in enumerate(_RECORD_INTS):
        records[:, i] = getattr(episode, name)
    records[:, e.INDEX - e.CROSSING] = np.arange(n)
    floats = records[:, e.RECORD_INTS : RECORD_ROW]
    floats[:, e.TARGET], floats[:, e.LOG_INITIAL] = episode.target, episode.log_initial
    floats[:, e.LOG_TARGET] = episode.log_target
    floats[:, e.INITIAL_LOSS] = episode.initial
    floats[:, e.LOG_SPAN] = episode.log_initial - episode.log_target
    entering_rows(
        records[:, RECORD_ROW:],
        episode.log_initial,
        episode.log_target,
        estimates,
        estimate,
        episode.categories,
    )
    return records

