"""The simulator state: per-slot data, the observation's feature table, the queue and counters.

Speed shapes this module: a step must cost about as much as a CartPole step. So the observation's
state vector is kept, its slot features in a table (a view of it) updated only where something
changed (a slot served, filled or freed); data written when a task is served (cursor, loss,
progress) are Python lists, cheaper to write than numpy scalars, and `State.train` trains every
served slot in one call; data written only when a slot fills or frees are numpy arrays, which a
`SchedulerView` copies in one call each. An empty slot holds neutral values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core.features import (
    ESTIMATES,
    GLOBAL_FEATURES,
    NO_PREDICTOR,
    OBS_BOUND,
    SlotFeature,
    entering_rows,
    slot_width,
    write_estimates,
)
from coreenv.core.tasks import Task

__all__ = ["EMPTY", "NEVER", "Counters", "State", "initial"]

EMPTY = -1
NEVER = 2**62  # deadline of an empty slot: never expires
# plain-int column indices: enum member lookups are measurably slow in the per-step path
_LOG_LOSS = int(SlotFeature.LOG_LOSS)
_BATCHES, _PROGRESS, _READY = (
    int(SlotFeature.BATCHES),
    int(SlotFeature.PROGRESS),
    int(SlotFeature.READY),
)


@dataclass
class Counters:
    """Running totals for the design §2 metrics."""

    arrivals: int = 0
    successes: int = 0
    failures: int = 0
    feasible: int = 0
    unknown_demand: int = 0  # arrivals whose demand cannot be known (live curves)
    steps: int = 0
    full_queue_steps: int = 0
    waiting_sum: int = 0
    busy_node_steps: int = 0
    conflicts: int = 0
    ready_delay_sum: int = 0
    ready_count: int = 0


@dataclass
class State:
    """Everything that changes during an episode. `transition` mutates it in place.

    Per-slot entries have length K; numpy arrays are only ever written in place, so views of them
    stay valid. ``tasks[j]`` is the `Task` in slot j or None.
    """

    t: int
    min_prefix: int  # W_min, for the ready feature
    has_predictor: bool  # whether estimates are made; if not, they read NO_PREDICTOR
    time_scale: float  # divides time-like features
    batch_scale: float  # B · time_scale, divides batch-like features
    tasks: list[Task | None]
    # written when a slot fills or frees
    mask: np.ndarray  # (K + 1,) int8 action mask: occupied slots, then idle (always 1)
    occupied: np.ndarray  # (K,) bool, a view of mask[:K]
    filled: list[bool]  # the same as a list, cheaper to read one by one
    uid: np.ndarray  # (K,) int64, EMPTY for a free slot
    arrival: np.ndarray  # (K,) int64, b_k
    deadline: np.ndarray  # (K,) int64, d_k (NEVER when empty)
    time_left: np.ndarray  # (K,) float64, (d_k - t) / time_scale, kept by subtracting slot_scale
    slot_scale: np.ndarray  # (K,) float64, 1 / time_scale (0 when empty)
    loss0: np.ndarray  # (K,) float64, L_k[0] (1 when empty)
    target: np.ndarray  # (K,) float64, epsilon_k
    # written when a task trains or gets an estimate
    cursor: list[int]  # n_k: batches trained
    loss: list[float]  # last revealed loss L_k[n_k]
    progress: list[float]  # log-progress q_k (0 when empty)
    est_remaining: list[float]  # predictor's remaining batches (0 until ready)
    est_p_success: list[float]  # predictor's P(success)
    vector: (
        np.ndarray
    )  # (3 + K·F,) float32 `state_vector`; globals, time left written when observed
    table: np.ndarray  # (K, F) float32 slot features, a view of vector[3:]
    rows: list[np.ndarray]  # views of the table's rows, made once (a view costs more than a lookup)
    served: list[int]  # (M,) task uid each node trained last step (EMPTY = idle)
    waiting: list[Task] = field(default_factory=list)
    num_occupied: int = 0
    next_expiry: int = NEVER  # earliest deadline among the slots
    version: int = 0  # changes whenever a task enters or leaves a slot
    potential: float = 0.0
    next_uid: int = 0
    counters: Counters = field(default_factory=Counters)

    def in_system(self) -> int:
        """Tasks in the slots or waiting."""
        return self.num_occupied + len(self.waiting)

    def __setstate__(self, state: dict) -> None:
        """Unpickling copies arrays: re-make the views that must share memory with them."""
        state.setdefault("has_predictor", True)  # pickled by 0.1.0: estimates read 0 as they did
        if "vector" not in state:  # pickled by 0.1.0: the table stood alone
            state["vector"] = np.concatenate(
                (np.zeros(len(GLOBAL_FEATURES), np.float32), state["table"].ravel())
            )
        state.setdefault("filled", state["mask"][:-1].astype(bool).tolist())
        self.__dict__.update(state)
        self.occupied = self.mask[:-1].view(bool)
        self.table = self.vector[len(GLOBAL_FEATURES) :].reshape(self.table.shape)
        self.rows = list(self.table)

    def set_has_predictor(self, attached: bool) -> None:
        """A predictor was attached or detached: occupied slots' estimates restart from none."""
        self.has_predictor = attached
        for j in np.flatnonzero(self.occupied):
            self.est_remaining[j] = self.est_p_success[j] = 0.0
            self.table[j, ESTIMATES] = 0.0 if attached else NO_PREDICTOR

    def clear_slot(self, j: int) -> None:
        """Free slot j, restoring the neutral values."""
        self._set_slot(j, None)
        self.num_occupied -= 1
        self.next_expiry = int(self.deadline.min())

    def fill_slot(self, j: int, task: Task) -> None:
        """Put a (not yet trained) task into slot j."""
        self._set_slot(j, task)
        estimate = 0.0 if self.has_predictor else NO_PREDICTOR
        entering_rows(self.table[j], task.log_initial, task.log_target, estimate)
        self.num_occupied += 1
        self.next_expiry = min(self.next_expiry, task.deadline)

    def _set_slot(self, j: int, task: Task | None) -> None:
        present = task is not None
        self.tasks[j] = task
        self.mask[j] = self.filled[j] = present
        self.uid[j] = task.uid if present else EMPTY
        self.arrival[j] = task.arrival if present else 0
        self.deadline[j] = task.deadline if present else NEVER
        self.time_left[j] = (task.deadline - self.t) / self.time_scale if present else 0.0
        self.slot_scale[j] = 1.0 / self.time_scale if present else 0.0
        self.loss0[j] = self.loss[j] = float(task.curve.losses[0]) if present else 1.0
        self.target[j] = task.target if present else 0.5
        self.cursor[j] = 0
        self.progress[j] = self.est_remaining[j] = self.est_p_success[j] = 0.0
        self.table[j] = 0.0  # a filled slot's row is written by fill_slot
        self.version += 1

    def train(self, slots: list[int], batches: int) -> tuple[list[int], list[int]]:
        """Train the task in each served slot for up to ``batches`` batches (design §2 step 2).

        ``slots``: the slot each node trains, -1 for idle. Training stops at the target; the
        losses are revealed. Sets `served` and returns ``(reached, trained)``: the slots whose
        task reached its target (the caller frees them), then those trained without it.

        Updates the features, including the log-progress
        ``q = clip(log(L_0 / max(L, eps)) / log(L_0 / eps), 0, 1)`` (it cannot exceed 1).
        """
        tasks, cursor, rows, min_prefix = self.tasks, self.cursor, self.rows, self.min_prefix
        served, reached, trained = [], [], []
        for j in slots:  # one loop for all nodes: locals stay bound, no call per slot
            if j < 0:
                served.append(EMPTY)
                continue
            task = tasks[j]
            served.append(task.uid)
            losses = task.curve.losses
            target = task.target
            start = cursor[j]
            last = len(losses) - 1
            if start == last:  # only a live run can end before its target: nothing left to train
                trained.append(j)
                continue
            stop = start + batches if start + batches < last else last
            n = start + 1
            while n < stop and losses[n] > target:
                n += 1
            loss = float(losses[n])
            if start < min_prefix <= n:
                self.counters.ready_delay_sum += self.t + 1 - task.arrival
                self.counters.ready_count += 1
            log_loss = math.log(loss)
            log_initial, log_target = task.log_initial, task.log_target
            q = (log_initial - (log_loss if log_loss > log_target else log_target)) / (
                log_initial - log_target
            )
            q = q if q > 0.0 else 0.0
            cursor[j] = n
            self.loss[j] = loss
            self.progress[j] = q
            row = rows[j]
            row[_LOG_LOSS] = log_loss - log_initial
            batch_feature = n / self.batch_scale
            row[_BATCHES] = batch_feature if batch_feature < OBS_BOUND else OBS_BOUND
            row[_PROGRESS] = q
            row[_READY] = n >= min_prefix
            (reached if loss <= target else trained).append(j)
        self.served = served
        return reached, trained

    def record_estimates(
        self,
        slots: list[int],
        remaining: np.ndarray,
        p_success: np.ndarray,
        quantiles: np.ndarray | None,
    ) -> None:
        """Slots ``slots`` have new predictor estimates (and quantiles, (len(slots), Q))."""
        for j, r, p in zip(slots, remaining.tolist(), p_success.tolist()):
            self.est_remaining[j], self.est_p_success[j] = r, p
        write_estimates(self.table, slots, remaining, p_success, quantiles, self.batch_scale)


def initial(config: EnvConfig, has_predictor: bool = False) -> State:
    """An empty system at t = 0: every slot free, nobody waiting."""
    k, width = config.num_slots, slot_width(config)
    mask = np.zeros(k + 1, np.int8)
    mask[k] = 1  # idle is always allowed
    vector = np.zeros(len(GLOBAL_FEATURES) + k * width, np.float32)
    table = vector[len(GLOBAL_FEATURES) :].reshape(k, width)
    return State(
        t=0,
        min_prefix=config.min_prefix,
        has_predictor=has_predictor,
        time_scale=float(config.time_scale),
        batch_scale=float(config.time_scale * config.batches_per_step),
        tasks=[None] * k,
        mask=mask,
        occupied=mask[:k].view(bool),
        filled=[False] * k,
        uid=np.full(k, EMPTY, np.int64),
        arrival=np.zeros(k, np.int64),
        deadline=np.full(k, NEVER, np.int64),
        time_left=np.zeros(k),
        slot_scale=np.zeros(k),
        loss0=np.ones(k),
        target=np.full(k, 0.5),
        cursor=[0] * k,
        loss=[1.0] * k,
        progress=[0.0] * k,
        est_remaining=[0.0] * k,
        est_p_success=[0.0] * k,
        vector=vector,
        table=table,
        rows=list(table),
        served=[EMPTY] * config.num_nodes,
    )
