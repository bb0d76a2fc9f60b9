"""The state of B lanes as arrays: each lane's slots (`LaneSlots`) and episode tasks (`LaneTasks`).

The batched counterpart of `State`: the same per-slot data, one row per lane, updated by the same
floating-point operations in the same order, so that a lane's features equal `CoreEnv`'s bit for
bit. Speed shapes the layout: a step costs a number of array operations that does not grow with
the number of lanes, so slots are addressed by flat indices ``lane * K + slot`` (lanes in order),
and what a task brings into a slot is packed into one record, so that a slot fills in one gather
and a few scatters. An empty slot holds the neutral values of `State`
and points at the curve store's `SENTINEL`, so that whole-array training computes its features
as exactly 0 (`LaneSlots.train`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core.curve_stores import SENTINEL
from coreenv.core.episodes import EpisodeTasks
from coreenv.core.features import (
    ESTIMATES,
    NO_PREDICTOR,
    OBS_BOUND,
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
_EMPTY_INTS = np.array([0, NEVER, 0, SENTINEL, 0, NEVER, EMPTY], np.int64)[:, None]
_EMPTY_FLOATS = np.array([0.5, 0.0, -1.0, 1.0])[:, None]

_OCCUPIED, _LOG_LOSS = int(SlotFeature.OCCUPIED), int(SlotFeature.LOG_LOSS)
_TIME_LEFT, _BATCHES, _PROGRESS, _READY = (
    int(SlotFeature.TIME_LEFT),
    int(SlotFeature.BATCHES),
    int(SlotFeature.PROGRESS),
    int(SlotFeature.READY),
)
_ROW = len(INT_FIELDS) + len(FLOAT_FIELDS)  # where a task record's feature row starts
_NONE = np.zeros(0, np.int64)


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
        self.together = False  # whether some episode has several tasks arriving in one step

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
        self.together = self.together or bool((np.diff(episode.arrival) == 0).any())
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

    def arriving(self, now: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step 5: the tasks whose arrival step is ``now`` (B,), as (lanes, task indices).

        A lane appears once per arriving task.
        """
        lanes = (self.next_arrival == now).nonzero()[0]
        found_lanes, found_tasks = [], []
        while lanes.size:
            tasks = self.next[lanes]
            self.next[lanes] = tasks + 1
            self.next_arrival[lanes] = self.arrival[lanes, tasks + 1]
            found_lanes.append(lanes)
            found_tasks.append(tasks)
            if not self.together:
                break
            lanes = lanes[self.next_arrival[lanes] == now[lanes]]
        if len(found_lanes) == 1:
            return found_lanes[0], found_tasks[0]
        return np.concatenate([_NONE, *found_lanes]), np.concatenate([_NONE, *found_tasks])

    def queue(self, lanes: np.ndarray, tasks: np.ndarray) -> None:
        """Tasks ``tasks`` of ``lanes`` join their lanes' waiting queues."""
        if not lanes.size:
            return
        self.waiting[lanes, tasks] = True
        np.add.at(self.num_waiting, lanes, 1)
        np.minimum.at(self.waiting_deadline, lanes, self.deadline[lanes, tasks])

    def expire(self, now: np.ndarray, failures: np.ndarray) -> None:
        """Step 4 for the queue: waiting tasks whose deadline is ``now`` (B,) or earlier fail."""
        lanes = (self.waiting_deadline <= now).nonzero()[0]
        if not lanes.size:
            return
        waiting, deadlines = self.waiting[lanes], self.deadline[lanes]
        gone = waiting & (deadlines <= now[lanes, None])
        failed = gone.sum(axis=1)
        failures[lanes] += failed
        self.num_waiting[lanes] -= failed
        waiting &= ~gone
        self.waiting[lanes] = waiting
        self.waiting_deadline[lanes] = np.where(waiting, deadlines, NEVER).min(axis=1)

    def pick(self, lanes: np.ndarray, edf: bool) -> np.ndarray:
        """The waiting task each of ``lanes`` admits next: first arrived, or earliest deadline.

        Ties on the deadline go to the earlier arrival (argmin takes the first index).
        """
        if edf:
            return np.where(self.waiting[lanes], self.deadline[lanes], NEVER).argmin(axis=1)
        return self.waiting[lanes].argmax(axis=1)

    def take(self, lanes: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """Tasks ``tasks`` of ``lanes`` (one per lane) leave the queue for a slot.

        Returns which of ``lanes`` still have tasks waiting.
        """
        self.waiting[lanes, tasks] = False
        waiting = self.num_waiting[lanes] - 1
        self.num_waiting[lanes] = waiting
        left = waiting > 0
        self.waiting_deadline[lanes[~left]] = NEVER
        return left

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

    _VIEWS = ("occupied", "time_left", "slot_scale", "progress", "deadline")

    def __init__(self, num_lanes: int, config: EnvConfig) -> None:
        b, k, m = num_lanes, config.num_slots, config.num_nodes
        self.num_slots = k
        self.time_scale = float(config.time_scale)
        self.batch_scale = float(config.time_scale * config.batches_per_step)
        self.batches_per_step = config.batches_per_step
        self.min_prefix = config.min_prefix
        self.mask = np.zeros((b, k + 2), np.int8)
        self.mask[:, k] = 1  # idle is always allowed
        slots = np.arange(b * k)
        self._mask_at = slots + 2 * (slots // k)  # where flat slot i is in the flat mask
        # (B, M) arrays in full, not broadcast (B, 1) ones: adding those is several times slower
        self._mask_row = np.repeat(np.arange(b)[:, None] * (k + 2), m, axis=1)  # lane's row start
        self._claimant = np.repeat(np.arange(m)[None], b, axis=0)  # node ids
        self._apart = b * (k + 2) + np.arange(b * m).reshape(b, m)  # one cell per node, after
        self._owner = np.empty(b * (k + 2 + m), np.int64)  # scratch: which node claims a cell
        self.num_occupied = np.zeros(b, np.int64)
        self.table = np.zeros((b * k, slot_width(config)))
        self.ints = np.repeat(_EMPTY_INTS, b * k, axis=1)  # the cursor, then INT_FIELDS
        self.floats = np.repeat(_EMPTY_FLOATS, b * k, axis=1)
        self.untrained_guard = False  # set when a task's target is not below its initial loss
        self.dynamic = np.zeros((2, b * k))  # written every step; 0 when a slot frees
        self.estimates = np.zeros((2, b * k))  # the predictor's remaining and P(success), raw
        self._link()

    def _link(self) -> None:
        """Make the views (again after unpickling, which copies arrays)."""
        self.occupied = self.mask[:, : self.num_slots].view(bool)
        self.time_left = self.table[:, _TIME_LEFT]  # kept in the table: observed as it is
        self.slot_scale, self.progress = self.dynamic
        self.deadline = self.ints[1 + _DEADLINE].reshape(-1, self.num_slots)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in self._VIEWS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._link()

    def claims(self, chosen: np.ndarray) -> np.ndarray:
        """`resolve_actions` for every lane: (B, M) bool, whether node i trains its slot.

        ``chosen`` (B, M) int64 in ``[0, K + 1]``, ``K`` idle and ``K + 1`` out of range (the
        mask's column that is always 0). Without two nodes of a lane on one slot, a node trains
        iff its slot is occupied; otherwise nodes claim in index order, the later one idling.
        """
        claimable = self.mask.reshape(-1).view(bool)
        at = self._mask_row + chosen  # (B, M) into the flat mask
        real = chosen < self.num_slots
        takes = claimable[at]
        takes &= real
        # each node writes its id where it claims (a node that does not claim, in a cell of its
        # own): two claimants of one slot cannot both read back their own id, whichever write wins
        cells = np.where(takes, at, self._apart)
        self._owner[cells] = self._claimant
        if not (self._owner[cells] != self._claimant).any():
            return takes
        claimable = claimable.copy()
        for i in range(chosen.shape[1]):  # in node order: a claimed slot is claimable no more
            np.logical_and(claimable[at[:, i]], real[:, i], out=takes[:, i])
            claimable[at[:, i][takes[:, i]]] = False
        return takes

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

    def fill(self, lanes: np.ndarray, tasks: LaneTasks, picks: np.ndarray, now: np.ndarray) -> None:
        """Put task ``picks[i]`` of lane ``lanes[i]`` into that lane's lowest free slot at ``now``.

        Each lane appears at most once and has a free slot.
        """
        flat = lanes * self.num_slots + self.occupied[lanes].argmin(axis=1)
        records = tasks.records[lanes, picks]  # (L, 6 + 4 + F)
        self.ints[1:, flat] = records[:, : len(INT_FIELDS)].T  # exact: floats of small ints
        self.floats[:, flat] = records[:, len(INT_FIELDS) : _ROW].T  # the cursor is 0 already
        self.table[flat] = records[:, _ROW:]
        self.time_left[flat] = (records[:, _DEADLINE] - now[lanes]) / self.time_scale
        self.slot_scale[flat] = 1.0 / self.time_scale
        self.mask.reshape(-1)[self._mask_at[flat]] = 1
        self.num_occupied[lanes] += 1

    def clear(self, flat: np.ndarray) -> None:
        """Free slots ``flat`` (several of a lane at once, too), restoring the neutral values."""
        self.mask.reshape(-1)[self._mask_at[flat]] = 0
        self.num_occupied -= np.bincount(flat // self.num_slots, minlength=self.num_occupied.size)
        self.ints[:, flat] = _EMPTY_INTS
        self.floats[:, flat] = _EMPTY_FLOATS
        self.dynamic[:, flat] = 0.0
        self.estimates[:, flat] = 0.0
        self.table[flat] = 0.0

    def train(
        self, served: np.ndarray, now: np.ndarray, logs: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Steps 2-3, `State.train` for the served slots ``served`` (flat indices) at once.

        A served slot trains to ``n = min(first loss <= target, cursor + B, end of its curve)``
        (at the end of its curve it trains nothing) and succeeds iff ``n`` is that first loss,
        its crossing. Every other slot gets ``n = cursor``, below its crossing: the same
        operations on the same values rewrite its features unchanged (an empty slot's give 0),
        so whole (B·K) arrays are updated without gathering the served slots. ``logs`` is the
        curve store's.
        Returns ``(reached, lanes, delays)``: the flat slots whose task reached its target, and
        the lanes of the tasks that became prediction-ready with their delays from arrival.
        """
        ints, floats, table, min_prefix = self.ints, self.floats, self.table, self.min_prefix
        cursor, crossing = ints[_CURSOR], ints[1 + _CROSSING]
        n = cursor.copy()
        n[served] += self.batches_per_step
        np.minimum(n, ints[1 + _LAST], out=n)
        np.minimum(n, crossing, out=n)  # the cursor is below the crossing: only training meets it
        log_loss, log_initial = logs[ints[1 + _OFFSET] + n], floats[_LOG_INITIAL]
        q = self.progress
        np.subtract(log_initial, np.maximum(log_loss, floats[_LOG_TARGET]), out=q)
        q /= floats[_LOG_SPAN]
        np.maximum(q, 0.0, out=q)  # q is never -0.0: the numerator is a difference
        if self.untrained_guard:  # a target at or above L_0 would give q = 1 before training
            q[n == 0] = 0.0
        reached = (n == crossing).nonzero()[0]
        newly = ((n >= min_prefix) & (cursor < min_prefix)).nonzero()[0]  # became ready
        lanes = newly // self.num_slots
        delays = now[lanes] - ints[1 + _ARRIVAL, newly]
        cursor[:] = n
        np.subtract(log_loss, log_initial, out=table[:, _LOG_LOSS])
        np.minimum(n / self.batch_scale, OBS_BOUND, out=table[:, _BATCHES])
        table[:, _PROGRESS] = q
        table[newly, _READY] = 1.0  # READY changes only there: a slot fills with it 0
        return reached, lanes, delays

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
