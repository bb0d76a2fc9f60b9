"""`Lanes`: the state of B episodes ("lanes") as a few arrays, what `engine.step` advances.

`CoreEnv` holds one lane, `BatchedCore` B. Slots are addressed by flat indices
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
from coreenv.context import Description, FinishedTask, TaskContext, reads_context
from coreenv.core import engine as e
from coreenv.core.episodes import EpisodeTasks
from coreenv.core.events import Decisions
from coreenv.core.features import (
    NO_PREDICTOR,
    SlotFeature,
    cluster_columns,
    entering_rows,
    estimate_columns,
    observation_size,
    slot_width,
    write_estimates,
)
from coreenv.core.metrics import Counters
from coreenv.core.views import SchedulerView
from coreenv.core.wls_fit import estimate_slots
from coreenv.predictor import Predictor, observed_estimates
from coreenv.wls import in_engine

__all__ = ["Lanes", "defers_estimates"]

_ROW = e.RECORD_INTS + e.RECORD_FLOATS  # where a task record's feature row starts
_RECORD_INTS = ("crossing", "last", "offset", "arrival", "deadline")  # then the task's index
_OCCUPIED = int(SlotFeature.OCCUPIED)


def defers_estimates(decisions: Decisions, predictor: Predictor | None) -> bool:
    """Whether held steps put their estimates off until the lane decides (`Lanes.defer`).

    In the event form, unless a decision waits on them (``feasibility``) or they are computed in
    the engine (WLS: cheap).
    """
    return (
        decisions.held
        and not decisions.feasibility
        and predictor is not None
        and in_engine(predictor) is None
    )


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
        descriptions: ``descriptions[lane][i]`` is task i's `Description`; None per lane at
            ``information="prefix"``.
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
        self.deferred = np.full(b * k, -1, np.int64)  # per flat slot, the task `defer` put off
        self.lane = np.zeros((b, e.LANE_COLUMNS), np.int64)
        self.lane[:, [e.NEXT_ARRIVAL, e.WAITING_DEADLINE]] = e.NEVER
        self.returns = np.zeros((b, 2))
        self.slot_ints = np.repeat(e.EMPTY_INTS[:, None], b * k, axis=1)
        self.slot_floats = np.repeat(e.EMPTY_FLOATS[:, None], b * k, axis=1)
        self.table = np.zeros((b * k, width))
        self.mask = np.zeros((b, k + 2), np.int8)
        self.mask[:, k] = 1  # idle is always allowed
        self.record_size = _ROW + width
        self.task_ints = np.zeros((e.TASK_ROWS, b, 0), np.int64)
        self.records = np.zeros((b, 0, self.record_size))
        self._widen(1)
        self.curves: list[Sequence] = [[] for _ in range(b)]
        self.descriptions: list[Sequence[Description] | None] = [None] * b
        self.warm: list[tuple[FinishedTask, ...]] = [()] * b
        self._histories: list[tuple[FinishedTask, ...]] = [()] * b  # each lane's, as last made
        self.estimate_columns = estimate_columns(config)
        self.remembers = config.information == "history"
        self.new_estimate = NO_PREDICTOR  # what a filled slot's estimates read (0 with one)
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

    def __setstate__(self, state: dict) -> None:
        """Lanes pickled before the state form get its shape."""
        b, m, d = state["obs_shape"]
        state.setdefault("state_shape", (b, 1, d - m))
        ints = state["task_ints"]
        if len(ints) < e.TASK_ROWS:  # pickled before tasks recorded how they ended
            grown = np.zeros((e.TASK_ROWS, *ints.shape[1:]), np.int64)
            grown[: len(ints)] = ints
            state["task_ints"] = grown
        _grow_for_cluster(state, m)
        state.setdefault("descriptions", [None] * b)
        state.setdefault(
            "estimate_columns", slice(int(SlotFeature.EST_REMAINING), state["table"].shape[1])
        )
        state.setdefault("remembers", False)
        state.setdefault("warm", [()] * b)
        state.setdefault("_histories", [()] * b)
        state.setdefault("deferred", np.full(len(state["table"]), -1, np.int64))
        self.__dict__.update(state)

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
        ready = e.step(
            chosen,
            takes,
            claim,
            obs,
            self.ready,
            self.lane,
            self.returns,
            self.slot_ints,
            self.slot_floats,
            self.table,
            self.mask,
            self.task_ints,
            self.records,
            logs,
            self.settings,
            self.scales,
        )
        return (obs[:, 0] if states else obs), self.ready[:ready]

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
        self.descriptions[lane] = episode.descriptions
        self.warm[lane] = episode.warm
        self._histories[lane] = ()
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
        self.descriptions[lane] = None
        self.warm[lane] = ()
        self._histories[lane] = ()

    def shift_offsets(self, shift: np.ndarray) -> None:
        """The curve store moved lane b's curves by ``shift[b]``."""
        self.records[:, :, e.OFFSET - e.CROSSING] += shift[:, None]
        moved = np.repeat(shift, self.num_slots) * self.occupied.reshape(-1)  # not the sentinel
        self.slot_ints[e.OFFSET] += moved

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

    # -- the predictor's estimates ----------------------------------------------------------------

    def set_has_predictor(self, attached: bool) -> None:
        """A predictor was attached or detached: occupied slots' estimates restart from none."""
        self.new_estimate = 0.0 if attached else NO_PREDICTOR
        occupied = self.occupied.reshape(-1)
        columns = self.estimate_columns
        self.table[occupied, columns] = self.new_estimate
        self.slot_floats[e.EST_REMAINING :, occupied] = 0.0
        tasks = self.records[:, :, _ROW + _OCCUPIED] == 1.0  # not the padding
        self.records[tasks, _ROW + columns.start : _ROW + columns.stop] = self.new_estimate

    def estimate(
        self, ready: np.ndarray, predictor: Predictor, config: EnvConfig, logs: np.ndarray
    ) -> None:
        """Re-estimate the tasks in flat slots ``ready`` with one predictor call.

        A task's prefix is its revealed losses; its budget the batches its deadline still allows.
        A predictor with a `coreenv.wls.WLSEstimates` ``in_engine`` is one compiled call over
        ``logs``, the curve store's log-losses, instead (`wls_fit.estimate_slots`).
        """
        wls = in_engine(predictor)
        if wls is not None:
            args = (self.lane, self.slot_ints, self.slot_floats, self.table, logs)
            estimate_slots(ready, *args, self.settings, self.scales, *wls.settings())
            return
        which = ready // self.num_slots
        ints = self.slot_ints[:, ready]
        tasks, cursors = ints[e.INDEX].tolist(), ints[e.CURSOR].tolist()
        prefixes = [
            self.curves[b][task][: cursor + 1]
            for b, task, cursor in zip(which.tolist(), tasks, cursors)
        ]
        budgets = config.fastest_batches * (ints[e.DEADLINE] - self.lane[which, e.T])
        targets = self.slot_floats[e.TARGET, ready]
        levels = config.estimate_quantiles
        contexts = self.contexts(ready) if reads_context(predictor) else None
        estimates = observed_estimates(predictor, prefixes, targets, budgets, levels, contexts)
        self.record_estimates(ready, *estimates)

    def defer(self, ready: np.ndarray) -> None:
        """Put off the estimates slots ``ready`` are due now until their lane decides.

        No one sees a held step's estimates. A held action trains the same tasks every step
        until an event, so a task due in a hold is due again at its last step, where the lane
        decides: `estimate_deferred` then makes the estimates that step gives.
        """
        self.deferred[ready] = self.slot_ints[e.INDEX, ready]

    def estimate_deferred(
        self, predictor: Predictor, config: EnvConfig, logs: np.ndarray
    ) -> np.ndarray:
        """Make the estimates put off (`defer`) in one call; the lanes that had any.

        Every lane has decided when this is called. A task that has left its slot since is not
        estimated.
        """
        flat = np.flatnonzero(self.deferred >= 0)
        there = self.occupied.ravel()[flat] & (self.slot_ints[e.INDEX, flat] == self.deferred[flat])
        self.deferred[flat] = -1
        flat = flat[there]
        if flat.size:
            self.estimate(flat, predictor, config, logs)
        return np.unique(flat // self.num_slots)

    # -- what a cluster that remembers knows (EnvConfig.information) ------------------------------

    def contexts(self, flat: np.ndarray) -> list[TaskContext]:
        """The `TaskContext` of the task in each of the flat slots ``flat``."""
        histories: dict[int, tuple[FinishedTask, ...]] = {}
        contexts = []
        for j in flat.tolist():
            b, task = j // self.num_slots, int(self.slot_ints[e.INDEX, j])
            if b not in histories:
                histories[b] = self.history(b)
            described = self.descriptions[b]
            description = Description() if described is None else described[task]
            contexts.append(TaskContext(description, histories[b]))
        return contexts

    def history(self, lane: int) -> tuple[FinishedTask, ...]:
        """The tasks ``lane``'s episode has finished, in the order they left (then arrival).

        After the tasks it started with (`EnvConfig.warm_history`); empty below
        ``information="history"``.
        """
        described = self.descriptions[lane]
        if described is None or not self.remembers:
            return ()
        ints = self.task_ints[:, lane]
        done = np.flatnonzero(ints[e.TASK_OUTCOME] != e.PENDING)
        if len(self._histories[lane]) == len(self.warm[lane]) + done.size:
            return self._histories[lane]  # tasks only ever finish: no new one, the same history
        done = done[np.argsort(ints[e.TASK_ENDED, done], kind="stable")]
        targets = self.records[lane, :, e.RECORD_INTS + e.TARGET]
        self._histories[lane] = self.warm[lane] + tuple(
            FinishedTask(
                description=described[i],
                losses=np.asarray(self.curves[lane][i][: ints[e.TASK_TRAINED, i] + 1]),
                target=float(targets[i]),
                completed=bool(ints[e.TASK_OUTCOME, i] == e.COMPLETED),
                arrival=int(ints[e.TASK_ARRIVAL, i]),
                deadline=int(ints[e.TASK_DEADLINE, i]),
                ended=int(ints[e.TASK_ENDED, i]),
            )
            for i in done.tolist()
        )
        return self._histories[lane]

    def record_estimates(
        self,
        flat: np.ndarray,
        remaining: np.ndarray,
        p_success: np.ndarray,
        quantiles: np.ndarray | None,
    ) -> None:
        """Slots ``flat`` have new predictor estimates (and quantiles, (len(flat), Q))."""
        scale = self.scales[e.BATCH_SCALE]
        write_estimates(self.table, flat, remaining, p_success, quantiles, scale)
        self.slot_floats[e.EST_REMAINING, flat] = remaining
        self.slot_floats[e.EST_P, flat] = p_success

    # -- what the lanes show ----------------------------------------------------------------------

    def observe(self, which: np.ndarray) -> np.ndarray:
        """(len(which), M, D) float32 node observations of lanes ``which`` (`engine.observe`)."""
        return e.observe(which, self.lane, self.table, self.settings, self.scales[e.HORIZON])

    def observe_states(self, which: np.ndarray) -> np.ndarray:
        """(len(which), S) float32 states of lanes ``which`` (`engine.observe_states`)."""
        return e.observe_states(which, self.lane, self.table, self.settings, self.scales[e.HORIZON])

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
        ints = self.slot_ints.reshape(-1, self.num_lanes, self.num_slots)
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
            descriptions=list(self.descriptions) if any(self.descriptions) else (),
            histories=[self.history(b) for b in range(self.num_lanes)] if self.remembers else (),
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
    floats = records[:, e.RECORD_INTS : _ROW]
    floats[:, e.TARGET], floats[:, e.LOG_INITIAL] = episode.target, episode.log_initial
    floats[:, e.LOG_TARGET] = episode.log_target
    floats[:, e.INITIAL_LOSS] = episode.initial
    floats[:, e.LOG_SPAN] = episode.log_initial - episode.log_target
    entering_rows(
        records[:, _ROW:],
        episode.log_initial,
        episode.log_target,
        estimates,
        estimate,
        episode.categories,
    )
    return records


def _grow_for_cluster(state: dict, num_nodes: int) -> None:
    """Lanes pickled before the cluster options get its counters, slot rows and settings."""
    lane = state["lane"]
    if lane.shape[1] < e.LANE_COLUMNS:
        state["lane"] = np.insert(lane, e.SWITCHES, 0, axis=1)
        state["lane"] = np.insert(state["lane"], e.SWITCH_STEPS, 0, axis=1)
    ints = state["slot_ints"]
    if len(ints) < e.SLOT_INT_ROWS:
        new = np.repeat(e.EMPTY_INTS[len(ints) :, None], ints.shape[1], axis=1)
        state["slot_ints"] = np.concatenate([ints, new])
    settings = state["settings"]
    if settings.size < e.SPEEDS:
        state["settings"] = np.concatenate([settings, [0, -1], np.ones(num_nodes, np.int64)])
