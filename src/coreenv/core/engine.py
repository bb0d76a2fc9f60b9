"""The compiled rules of one step (design §2 steps 1-6), over the lanes' arrays, written once.

`step_lanes` runs, lane by lane, node claims, training the served slots, successes and expiry,
arrivals and admission, on the arrays of `LaneSlots` and `LaneTasks` (their docstrings give the
layout). It is compiled by Numba; with ``NUMBA_DISABLE_JIT=1`` the same source runs as Python, so
the suite proves one source in both modes. It draws nothing (episodes are drawn at reset) and
calls no predictor: it returns the slots to re-estimate.

Floating-point operations are those of `State.train` in the same order, so a lane's features
are bit for bit `CoreEnv`'s.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["claims", "clear_slot", "observe", "step_lanes"]

# rows of LaneSlots.ints (the cursor, then lanes.INT_FIELDS) and LaneSlots.floats
CURSOR, CROSSING, LAST, OFFSET, ARRIVAL, DEADLINE, INDEX = range(7)
TARGET, LOG_INITIAL, LOG_TARGET, LOG_SPAN = range(4)
# columns of a slot's feature row (features.SlotFeature)
LOG_LOSS_COL, TIME_LEFT_COL, BATCHES_COL, PROGRESS_COL, READY_COL = 1, 3, 4, 5, 6
# rows of BatchedCore.counts (batched._COUNTED)
BUSY, SUCCESSES, FAILURES, FULL, WAITING, READY_DELAY, READY_COUNT = 0, 1, 2, 3, 4, 6, 7
NEVER = 2**62
TASK_DEADLINE = 4  # a task record's deadline (lanes.INT_FIELDS)
RECORD_INTS, RECORD_FLOATS = 6, 4  # a task record: its ints, floats, then its feature row


@njit(cache=True)
def clear_slot(j: int, slot_arrays: tuple) -> None:
    """Free flat slot ``j``, restoring the neutral values (`LaneSlots` describes them)."""
    mask, num_occupied, ints, floats, empty_ints, empty_floats, table, dynamic, estimates = (
        slot_arrays
    )
    k = mask.shape[1] - 2
    mask[j // k, j % k] = 0
    num_occupied[j // k] -= 1
    ints[:, j] = empty_ints
    floats[:, j] = empty_floats
    dynamic[:, j] = 0.0
    estimates[:, j] = 0.0
    table[j, :] = 0.0


@njit(cache=True)
def claims(chosen: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(B, M) bool: whether node i of lane b trains the slot it chose (design §2 step 1).

    ``chosen`` (B, M) int64 in ``[0, K + 1]`` (``K`` idles, ``K + 1`` is out of range); ``mask``
    (B, K + 2) `LaneSlots.mask`. Nodes claim in index order: an occupied slot goes to the first
    node that chose it; the later claimants idle.
    """
    lanes, nodes = chosen.shape
    k = mask.shape[1] - 2
    takes = np.zeros((lanes, nodes), np.bool_)
    for b in range(lanes):
        for i in range(nodes):
            a = chosen[b, i]
            if a < k and mask[b, a] and not _claimed(chosen, takes, b, i, a):
                takes[b, i] = True
    return takes


@njit(cache=True)
def step_lanes(
    chosen: np.ndarray,
    takes: np.ndarray,
    active: np.ndarray,
    t: np.ndarray,
    counts: np.ndarray,
    slot_arrays: tuple,
    task_arrays: tuple,
    logs: np.ndarray,
    settings: tuple,
) -> tuple[np.ndarray, np.ndarray]:
    """Advance every active lane by one step, in place; `transition`'s order lane by lane.

    Args:
        chosen: (B, M) int64 node actions in ``[0, K + 1]`` (``K`` idles, ``K + 1`` is out of
            range); inactive lanes idle.
        takes: (B, M) `claims` of ``chosen``.
        active: (B,) bool, the lanes running an episode.
        t: (B,) int64 clocks, advanced for active lanes.
        counts: (C, B) int64 `BatchedCore.counts`, updated.
        slot_arrays: `LaneSlots`' (mask, num_occupied, ints, floats, empty ints, empty floats,
            table, dynamic, estimates).
        task_arrays: `LaneTasks`' (arrival, deadline, waiting, records, next, next arrival,
            number waiting, waiting deadline).
        logs: the curve store's log-losses.
        settings: (batches per step, W_min, batch scale, time scale, EDF admission, whether
            some target is not below its initial loss).

    Returns:
        Each lane's successes (B,), and the flat slots to re-estimate (trained without success,
        still holding their task, with a ready prefix; lanes in order, then nodes).
    """
    mask, num_occupied, ints, floats, empty_ints, empty_floats, table, dynamic, estimates = (
        slot_arrays
    )
    arrival, deadline, waiting, records, upcoming, next_arrival, num_waiting, waiting_deadline = (
        task_arrays
    )
    batches, min_prefix, batch_scale, time_scale, edf, guard = settings
    lanes, nodes = chosen.shape
    k = mask.shape[1] - 2
    width = arrival.shape[1]
    slot_scale, progress = dynamic[0], dynamic[1]
    successes = np.zeros(lanes, np.int64)
    trained = np.empty(lanes * nodes, np.int64)
    num_trained = 0
    for b in range(lanes):
        now = t[b] + 1
        # -- statistics at the decision point
        if num_occupied[b] == k:
            counts[FULL, b] += 1
        counts[WAITING, b] += num_waiting[b]
        # -- steps 2-3: served slots train; those reaching the target succeed and leave
        won = np.empty(nodes, np.int64)
        num_won = 0
        for i in range(nodes):
            if not takes[b, i]:
                continue
            j = b * k + chosen[b, i]
            counts[BUSY, b] += 1
            start = ints[CURSOR, j]
            n = min(start + batches, ints[LAST, j], ints[CROSSING, j])
            log_loss = logs[ints[OFFSET, j] + n]
            log_initial = floats[LOG_INITIAL, j]
            q = (log_initial - max(log_loss, floats[LOG_TARGET, j])) / floats[LOG_SPAN, j]
            q = max(q, 0.0)
            if guard and n == 0:
                q = 0.0
            if n >= min_prefix and start < min_prefix:
                counts[READY_DELAY, b] += now - ints[ARRIVAL, j]
                counts[READY_COUNT, b] += 1
                table[j, READY_COL] = 1.0
            ints[CURSOR, j] = n
            progress[j] = q
            table[j, LOG_LOSS_COL] = log_loss - log_initial
            table[j, BATCHES_COL] = min(n / batch_scale, 1000.0)
            table[j, PROGRESS_COL] = q
            if n == ints[CROSSING, j]:
                won[num_won] = j
                num_won += 1
            else:
                trained[num_trained] = j
                num_trained += 1
        for j in won[:num_won]:  # they leave before deadlines are looked at
            clear_slot(j, slot_arrays)
        successes[b] = num_won
        counts[SUCCESSES, b] += num_won
        # -- step 4: tasks whose deadline has come fail and leave, in slots and waiting
        for j in range(b * k, (b + 1) * k):
            if mask[b, j - b * k] and ints[DEADLINE, j] <= now:
                counts[FAILURES, b] += 1
                clear_slot(j, slot_arrays)
        if waiting_deadline[b] <= now:
            earliest = NEVER
            for i in range(width):
                if not waiting[b, i]:
                    continue
                if deadline[b, i] <= now:
                    waiting[b, i] = False
                    num_waiting[b] -= 1
                    counts[FAILURES, b] += 1
                else:
                    earliest = min(earliest, deadline[b, i])
            waiting_deadline[b] = earliest
        # -- the clock moves on
        if not active[b]:
            continue
        t[b] = now
        for j in range(b * k, (b + 1) * k):
            table[j, TIME_LEFT_COL] -= slot_scale[j]
        # -- step 5: arrivals join the queue; step 6: waiting tasks fill the lowest free slots
        while next_arrival[b] == now:
            i = upcoming[b]
            upcoming[b] = i + 1
            next_arrival[b] = arrival[b, i + 1]
            waiting[b, i] = True
            num_waiting[b] += 1
            waiting_deadline[b] = min(waiting_deadline[b], deadline[b, i])
        while num_waiting[b] > 0 and num_occupied[b] < k:
            pick = _pick(waiting[b], deadline[b], edf)
            _fill(b, pick, now, time_scale, records[b, pick], slot_arrays)
            waiting[b, pick] = False
            num_waiting[b] -= 1
            if num_waiting[b] == 0:
                waiting_deadline[b] = NEVER
    ready = trained[:num_trained]
    return successes, ready[ints[CURSOR][ready] >= min_prefix]


@njit(cache=True)
def _claimed(chosen: np.ndarray, takes: np.ndarray, b: int, i: int, a: int) -> bool:
    """Whether an earlier node of lane ``b`` than ``i`` took slot ``a``."""
    for other in range(i):
        if takes[b, other] and chosen[b, other] == a:
            return True
    return False


@njit(cache=True)
def _pick(waiting: np.ndarray, deadline: np.ndarray, edf: bool) -> int:
    """The waiting task admitted next: first arrived, or earliest deadline (then first arrived)."""
    best, best_deadline = -1, NEVER + 1
    for i in range(waiting.size):
        if waiting[i]:
            if not edf:
                return i
            if deadline[i] < best_deadline:
                best, best_deadline = i, deadline[i]
    return best


@njit(cache=True)
def _fill(
    b: int, pick: int, now: int, time_scale: float, record: np.ndarray, slot_arrays: tuple
) -> None:
    """Put the task of ``record`` (`LaneTasks.records`) into lane ``b``'s lowest free slot."""
    mask, num_occupied, ints, floats, _, _, table, dynamic, _ = slot_arrays
    k = mask.shape[1] - 2
    a = 0
    while mask[b, a]:
        a += 1
    j = b * k + a
    for row in range(RECORD_INTS):  # exact: small ints as floats
        ints[1 + row, j] = np.int64(record[row])
    for row in range(RECORD_FLOATS):
        floats[row, j] = record[RECORD_INTS + row]
    table[j, :] = record[RECORD_INTS + RECORD_FLOATS :]
    table[j, TIME_LEFT_COL] = (record[TASK_DEADLINE] - now) / time_scale
    dynamic[0, j] = 1.0 / time_scale
    mask[b, a] = 1
    num_occupied[b] += 1


@njit(cache=True)
def observe(
    lanes: np.ndarray,
    t: np.ndarray,
    num_waiting: np.ndarray,
    num_occupied: np.ndarray,
    active: np.ndarray,
    table: np.ndarray,
    horizon: int,
    nodes: int,
) -> np.ndarray:
    """(L, M, D) float32: what `node_observations` gives the nodes of each of ``lanes``.

    A node's row: its one-hot id, then the state vector (the global features t / horizon, at
    most OBS_BOUND; waiting / K; nodes beyond the occupied slots / M; then the K slot blocks of
    ``table`` (B·K, F)). An inactive lane's rows are 0.
    """
    k = table.shape[0] // t.size
    width = table.shape[1]
    obs = np.zeros((lanes.size, nodes, nodes + 3 + k * width), np.float32)
    for r in range(lanes.size):
        b = lanes[r]
        if not active[b]:
            continue
        state = obs[r, 0, nodes:]
        state[0] = min(t[b] / horizon, 1000.0)
        state[1] = num_waiting[b] / k
        state[2] = max(nodes - num_occupied[b], 0) / nodes
        for s in range(k):
            state[3 + s * width : 3 + (s + 1) * width] = table[b * k + s]
        for i in range(1, nodes):
            obs[r, i, nodes:] = state
        for i in range(nodes):
            obs[r, i, i] = 1.0
    return obs
