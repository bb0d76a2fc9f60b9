"""The state of B lanes as arrays: each lane's slots (`LaneSlots`) and episode tasks (`LaneTasks`).

The batched counterpart of `State`: the same per-slot data, one row per lane, updated by
`engine.step_lanes` with the same floating-point operations in the same order, so that a lane's
features equal `CoreEnv`'s bit for bit. Slots are addressed by flat indices ``lane * K + slot``
(lanes in order), and what a task brings into a slot is packed into one record, copied when the
slot fills. An empty slot holds the neutral values of `State` and points at the curve store's
`SENTINEL`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core.curve_stores import SENTINEL
from coreenv.core.engine import clear_slot
from coreenv.core.episodes import EpisodeTasks
from coreenv.core.features import (
    ESTIMATES,
    NO_PREDICTOR,
    SlotFeature,
    entering_rows,
    slot_width,
    write_estimates,
)
from coreenv.core.state import EMPTY, NEVER

__all__ = ["FLOAT_FIELDS", "INT_FIELDS", "LaneSlots", "LaneTasks"]

INT_FIELDS = ("crossing", "last", "offset", "arrival", "deadline", "index")
"""A task's int data, rows of the packed arrays (index: the task's uid in its episode); a slot's
packed ints have its cursor first, then these."""
FLOAT_FIELDS = ("target", "log_initial", "log_target", "log_span")
"""A task's float data (log_span = log_initial - log_target, the log-progress denominator)."""
_CROSSING, _LAST, _OFFSET, _ARRIVAL, _DEADLINE, _INDEX = range(6)  # rows of a task's ints
_CURSOR = 0  # a slot's ints: the cursor, then the task's (row i + 1 for INT_FIELDS[i])
_TARGET, _LOG_INITIAL, _LOG_TARGET, _LOG_SPAN = range(4)
# an empty slot: cursor and last 0 (so it trains nothing), a crossing never met, the sentinel's
# offset, and floats for which the sentinel (log 0) gives log-progress 0
_EMPTY_INTS = np.array([0, NEVER, 0, SENTINEL, 0, NEVER, EMPTY], np.int64)
_EMPTY_FLOATS = np.array([0.5, 0.0, -1.0, 1.0])

_OCCUPIED = int(SlotFeature.OCCUPIED)
_ROW = len(INT_FIELDS) + len(FLOAT_FIELDS)  # where a task record's feature row starts


class LaneTasks:
    """Each lane's episode tasks, (B, N + 1) per field, its next arrival and its waiting queue.

    Column ``n`` (one past a lane's last task) and beyond are padding: arrival `NEVER`, not
    waiting, so a lookup one past the end needs no bounds check. ``records`` (B, N + 1, R)
    float64 packs what a slot takes from its task when it fills: INT_FIELDS (exact as floats),
    FLOAT_FIELDS and its first feature row, so that a fill gathers them at once.
    ``curves[lane][i]`` is task i's losses array. ``waiting_deadline`` is a lower bound of the
    earliest deadline in the queue (exact after `expire` looks at the lane, NEVER when the queue
    empties), so admission need not update it.
    """

    def __init__(self, num_lanes: int, features: int, has_predictor: bool) -> None:
        self.num_lanes = num_lanes
        self.record_size = _ROW + features  # R: features = F, the width of a slot block
        self.new_estimate = 0.0 if has_predictor else NO_PREDICTOR  # a filled slot's estimates
        self.width = 0
        self._allocate(1)
        self.next = np.zeros(num_lanes, np.int64)  # index of the next task to arrive
        self.next_arrival = np.full(num_lanes, NEVER)  # its arrival step
        self.num_waiting = np.zeros(num_lanes, np.int64)
        self.waiting_deadline = np.full(num_lanes, NEVER)
        self.curves: list[Sequence[np.ndarray]] = [[] for _ in range(num_lanes)]

    def _allocate(self, width: int) -> None:
        """Widen the tables to ``width`` columns, keeping what they hold."""
        old, self.width = self.width, width
        shape = (self.num_lanes, width)
        tables = {
            "arrival": np.full(shape, NEVER),
            "deadline": np.zeros(shape, np.int64),
            "feasible": np.zeros(shape, np.int8),
            "waiting": np.zeros(shape, bool),
            "records": np.zeros((*shape, self.record_size)),
        }
        for name, table in tables.items():
            if old:
                table[:, :old] = getattr(self, name)
            setattr(self, name, table)

    def load(self, lane: int, episode: EpisodeTasks) -> None:
        """Make ``episode`` the tasks of ``lane``; none has arrived yet."""
        n = len(episode.arrival)
        if n + 1 > self.width:
            self._allocate(max(n + 1, 2 * self.width))
        for name in ("arrival", "deadline", "feasible"):
            row = getattr(self, name)[lane]
            row[:n] = getattr(episode, name)
            row[n:] = NEVER if name == "arrival" else 0
        self.records[lane, :n] = _records(episode, self.new_estimate, self.record_size)
        self.records[lane, n:] = 0.0
        self.waiting[lane] = False
        self.next[lane] = 0
        self.next_arrival[lane] = self.arrival[lane, 0]
        self.num_waiting[lane] = 0
        self.waiting_deadline[lane] = NEVER
        self.curves[lane] = episode.curves

    def shift_offsets(self, shift: np.ndarray) -> None:
        """The curve store moved lane b's curves by ``shift[b]``."""
        self.records[:, :, _OFFSET] += shift[:, None]

    def set_has_predictor(self, attached: bool) -> None:
        """A predictor was attached or detached: slots filled from now on start without one."""
        self.new_estimate = 0.0 if attached else NO_PREDICTOR
        tasks = self.records[:, :, _ROW + _OCCUPIED] == 1.0  # not the padding
        self.records[tasks, _ROW + ESTIMATES.start :] = self.new_estimate  # the row ends a record

    @property
    def arrays(self) -> tuple:
        """What `engine.step_lanes` reads and writes of the tasks, in its order."""
        return (
            self.arrival,
            self.deadline,
            self.waiting,
            self.records,
            self.next,
            self.next_arrival,
            self.num_waiting,
            self.waiting_deadline,
        )

    def arrived(self, lane: int) -> tuple[int, int, int]:
        """(arrivals, feasible arrivals, arrivals of unknown demand) of ``lane`` so far."""
        feasible = self.feasible[lane, : self.next[lane]]
        return int(feasible.size), int((feasible == 1).sum()), int((feasible < 0).sum())


def _records(episode: EpisodeTasks, estimate: float, size: int) -> np.ndarray:
    """(n, R = ``size``) the records of ``episode``'s tasks (see `LaneTasks`)."""
    n = len(episode.arrival)
    records = np.zeros((n, size))
    for i, name in enumerate(INT_FIELDS[:_INDEX]):
        records[:, i] = getattr(episode, name)
    records[:, _INDEX] = np.arange(n)
    floats = records[:, len(INT_FIELDS) : _ROW]
    floats[:, _TARGET], floats[:, _LOG_INITIAL] = episode.target, episode.log_initial
    floats[:, _LOG_TARGET] = episode.log_target
    floats[:, _LOG_SPAN] = episode.log_initial - episode.log_target
    entering_rows(records[:, _ROW:], episode.log_initial, episode.log_target, estimate)
    return records


class LaneSlots:
    """The K slots of each lane as flat (B·K) arrays, the (B, K + 2) mask and the slot table.

    ``mask`` holds, per lane, the occupied slots, idle (always 1) and a column that is always 0
    (what `BatchedCore` maps out-of-range actions to); ``occupied`` (B, K) is a view of it.
    ``table`` (B·K, F) holds the slot features (float64: cast to float32 once, when observed,
    as `State` casts each value it writes) but the time left, written when observed.
    """

    _VIEWS = ("occupied", "progress")

    def __init__(self, num_lanes: int, config: EnvConfig) -> None:
        b, k = num_lanes, config.num_slots
        self.num_slots = k
        self.time_scale = float(config.time_scale)
        self.batch_scale = float(config.time_scale * config.batches_per_step)
        self.mask = np.zeros((b, k + 2), np.int8)
        self.mask[:, k] = 1  # idle is always allowed
        self.num_occupied = np.zeros(b, np.int64)
        self.table = np.zeros((b * k, slot_width(config)))
        self.ints = np.repeat(_EMPTY_INTS[:, None], b * k, axis=1)  # the cursor, then INT_FIELDS
        self.floats = np.repeat(_EMPTY_FLOATS[:, None], b * k, axis=1)
        self.untrained_guard = False  # set when a task's target is not below its initial loss
        self.dynamic = np.zeros((2, b * k))  # written every step; 0 when a slot frees
        self.estimates = np.zeros((2, b * k))  # the predictor's remaining and P(success), raw
        self._link()

    def _link(self) -> None:
        """Make the views (again after unpickling, which copies arrays)."""
        self.occupied = self.mask[:, : self.num_slots].view(bool)
        self.progress = self.dynamic[1]

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in self._VIEWS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._link()

    @property
    def arrays(self) -> tuple:
        """What `engine.step_lanes` reads and writes of the slots, in its order."""
        return (
            self.mask,
            self.num_occupied,
            self.ints,
            self.floats,
            _EMPTY_INTS,
            _EMPTY_FLOATS,
            self.table,
            self.dynamic,
            self.estimates,
        )

    def clear(self, flat: np.ndarray) -> None:
        """Free slots ``flat``, restoring the neutral values."""
        arrays = self.arrays
        for j in flat.tolist():
            clear_slot(j, arrays)

    def cursor(self, flat: np.ndarray) -> np.ndarray:
        """Batches trained by the tasks in slots ``flat``."""
        return self.ints[_CURSOR, flat]

    def task_fields(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(task index, deadline, target) of the tasks in slots ``flat``."""
        ints = self.ints[:, flat]
        return ints[1 + _INDEX], ints[1 + _DEADLINE], self.floats[_TARGET, flat]

    def shift_offsets(self, shift: np.ndarray) -> None:
        """The curve store moved lane b's curves by ``shift[b]``."""
        moved = np.repeat(shift, self.num_slots) * self.occupied.reshape(-1)  # not the sentinel
        self.ints[1 + _OFFSET] += moved

    def restart_estimates(self, value: float) -> None:
        """Every occupied slot's estimates restart from ``value`` (`State.set_has_predictor`)."""
        occupied = self.occupied.reshape(-1)
        self.table[occupied, ESTIMATES] = value
        self.estimates[:, occupied] = 0.0

    def record_estimates(
        self,
        flat: np.ndarray,
        remaining: np.ndarray,
        p_success: np.ndarray,
        quantiles: np.ndarray | None,
    ) -> None:
        """Slots ``flat`` have new predictor estimates (`State.record_estimates`)."""
        write_estimates(self.table, flat, remaining, p_success, quantiles, self.batch_scale)
        self.estimates[:, flat] = remaining, p_success

    def view_fields(self) -> dict[str, np.ndarray]:
        """(B, K) copies of what `SchedulerView` shows of the slots (estimates apart)."""
        b, k = self.num_occupied.size, self.num_slots
        ints = self.ints.reshape(-1, b, k)
        return {
            "occupied": self.occupied.copy(),
            "uid": ints[1 + _INDEX].copy(),
            "arrival": ints[1 + _ARRIVAL].copy(),
            "deadline": ints[1 + _DEADLINE].copy(),
            "batches": ints[_CURSOR].copy(),
            "target": self.floats[_TARGET].reshape(b, k).copy(),
        }

    def remaining(self) -> np.ndarray:
        """(B, K) true remaining batches of each slot's task (crossing - cursor; 0 if empty)."""
        left = self.ints[1 + _CROSSING] - self.ints[_CURSOR]
        return np.where(self.occupied.reshape(-1), left, 0).reshape(self.occupied.shape)

    def lane_tables(self) -> np.ndarray:
        """(B, K·F) each lane's slot table, as `state_vector` lays it out after the globals."""
        return self.table.reshape(self.num_occupied.size, -1)
