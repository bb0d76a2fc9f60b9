"""The compiled rules of one step (design §2 steps 1-6), over the lanes' arrays, written once.

`CoreEnv` is one lane of them and `BatchedCore` many; `lanes.Lanes` holds the arrays, whose
rows and columns are named here. `step` runs, lane by lane: node claims, the statistics of the
decision point, training the served slots, successes and expiry, arrivals and admission, the
team reward and the episode's end, then writes every lane's observation. It is compiled by
Numba; with ``NUMBA_DISABLE_JIT=1`` the same source runs as Python, so the suite proves one
source in both modes. It draws nothing (episodes are drawn at reset) and calls no predictor: it
returns the slots to re-estimate (`estimates.Estimates`). The event form's step is compiled here
too (`held_step`: `play` and the event rule, `decides`, in rounds), beside the step it repeats:
numba's cache notices a change only in the file of the function it caches.
"""

from __future__ import annotations

import getpass
import os
import tempfile
from collections.abc import Callable

import numba
import numpy as np

from coreenv.core.features import table_start
from coreenv.episodes.tasks import NEVER

__all__ = [
    "claims",
    "clear_slot",
    "decides",
    "due_rows",
    "held_step",
    "observe_rows",
    "play",
    "settle",
    "step",
]

EMPTY = -1  # the task number of an empty slot
OBS_BOUND = 1000.0  # features.OBS_BOUND

# columns of Lanes.lane (B, LANE_COLUMNS) int64: the clock and queue, then the counters of
# COUNTED (the `Counters` fields counted step by step), then what the last step gave
T, NUM_WAITING, NUM_OCCUPIED, NEXT, NEXT_ARRIVAL, WAITING_DEADLINE, VERSION, ACTIVE = range(8)
BUSY, SUCCESSES, FAILURES, FULL, WAITING_SUM, CONFLICTS, READY_DELAY, READY_COUNT = range(8, 16)
SWITCHES, SWITCH_STEPS = 16, 17
STEP_SUCCESSES, STEP_CONFLICTS, ENDED = range(18, 21)
LANE_COLUMNS = 21
COUNTED = (
    "busy_node_steps",
    "successes",
    "failures",
    "full_queue_steps",
    "waiting_sum",
    "conflicts",
    "ready_delay_sum",
    "ready_count",
    "switches",
    "switch_steps",
)
RUNNING, TERMINATED, TRUNCATED = 0, 1, 2  # values of ENDED
# columns of Lanes.returns (B, 2) float64
POTENTIAL, REWARD = 0, 1
# rows of Lanes.slot_ints (SLOT_INT_ROWS, B·K) int64 and Lanes.slot_floats (9, B·K) float64:
# then the node that last trained the slot's task (-1: none), the step it did, and the steps of
# restoring the task still needs before it trains (EnvConfig.switch_cost)
CURSOR, CROSSING, LAST, OFFSET, ARRIVAL, DEADLINE, INDEX = range(7)
NODE, TRAINED_AT, RESTORING = range(7, 10)
SLOT_INT_ROWS = 10
TARGET, LOG_INITIAL, LOG_TARGET, LOG_SPAN, INITIAL_LOSS = range(5)
SLOT_SCALE, PROGRESS, EST_REMAINING, EST_P = range(5, 9)
# rows of Lanes.task_ints (TASK_ROWS, B, W) int64: then how each task ended (an OUTCOMES value),
# the batches it had trained and the step it left
TASK_ARRIVAL, TASK_DEADLINE, TASK_WAITING, TASK_FEASIBLE = range(4)
TASK_OUTCOME, TASK_TRAINED, TASK_ENDED = range(4, 7)
TASK_ROWS = 7
PENDING, COMPLETED, FAILED = range(3)  # values of TASK_OUTCOME
# a task record (Lanes.records): slot_ints CROSSING..INDEX, slot_floats TARGET..INITIAL_LOSS,
# then its first feature row
RECORD_INTS, RECORD_FLOATS = 6, 5
RECORD_DEADLINE = DEADLINE - CROSSING
# entries of the settings (int64) and scales (float64) arrays (Lanes.settings, Lanes.scales):
# CLUSTER is the slot column of features.CLUSTER_FEATURES (-1: the cluster is not shown); the M
# node speeds follow SPEEDS
BATCHES, MIN_PREFIX, EDF, GUARD, ARRIVAL_END, MAX_STEPS, SWITCH_COST, CLUSTER, SPEEDS = range(9)
BATCH_SCALE, TIME_SCALE, BETA, HORIZON = range(4)
# columns of a slot's feature row (features.SlotFeature)
OCCUPIED_COL, LOG_LOSS_COL, LOG_TARGET_COL, TIME_LEFT_COL, BATCHES_COL = range(5)
PROGRESS_COL, READY_COL, P_SUCCESS_COL = 5, 6, 8
RULE_COLUMNS = (OCCUPIED_COL, READY_COL, LOG_TARGET_COL, BATCHES_COL, P_SUCCESS_COL)
"""The slot columns the event rule reads (`decides`)."""
GLOBALS = table_start(0)  # the global features: the state vector's first entries


def compiled(function: Callable, inline: bool = False) -> Callable:
    """``numba.njit`` with its cache on disk, so that a later process starts at once.

    Numba caches beside the source, else in the user's cache folder; where neither is writable
    (a read-only install without a home, numba#1771) it would refuse to compile, so the cache
    goes to a folder of this user's in the temporary directory instead. ``inline``: compiled
    into each compiled caller (numba's ``inline="always"``), for a function called per lane and
    step, whose call would cost more than its work.
    """
    options = {"cache": True, "inline": "always" if inline else "never"}
    try:
        return numba.njit(**options)(function)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        folder = f"coreenv-numba-{getpass.getuser()}"
        numba.config.CACHE_DIR = os.path.join(tempfile.gettempdir(), folder)
        return numba.njit(**options)(function)


def inlined(function: Callable) -> Callable:
    """`compiled`, and compiled into each compiled caller (``inline``)."""
    return compiled(function, inline=True)


EMPTY_INTS = np.array([0, NEVER, 0, 0, 0, NEVER, EMPTY, -1, -1, 0], np.int64)
"""An empty slot's ints: it trains nothing (cursor and last 0), meets no crossing, points at the
curve store's sentinel (offset 0, log 0), never expires and was trained on no node."""
EMPTY_FLOATS = np.array([0.5, 0.0, -1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
"""An empty slot's floats: with the sentinel they give log-progress 0."""


@compiled
def claims(chosen: np.ndarray, mask: np.ndarray, lane: np.ndarray, takes: np.ndarray) -> None:
    """Which nodes train the slot they chose (design §2 step 1), into ``takes`` (B, M) bool.

    ``chosen`` (B, M) int64 in ``[0, K + 1]`` (``K`` idles, ``K + 1`` is anything not an int in
    ``[0, K]``); ``mask`` (B, K + 2) `Lanes.mask`. Nodes claim in index order: an occupied slot
    goes to the first node that chose it; the later claimants idle. Each lane's count of node
    actions turned into idling goes into ``lane[:, STEP_CONFLICTS]``; inactive lanes idle.
    """
    lanes, nodes = chosen.shape
    k = mask.shape[1] - 2
    for b in range(lanes):
        conflicts = 0
        for i in range(nodes):
            a = chosen[b, i]
            take = lane[b, ACTIVE] == 1 and a < k and mask[b, a] == 1
            if take:
                for other in range(i):
                    if takes[b, other] and chosen[b, other] == a:
                        take = False
            takes[b, i] = take
            if not take and a != k and lane[b, ACTIVE] == 1:
                conflicts += 1
        lane[b, STEP_CONFLICTS] = conflicts


@compiled
def step(
    chosen: np.ndarray,
    takes: np.ndarray,
    claim: bool,
    obs: np.ndarray,
    ready: np.ndarray,
    lane: np.ndarray,
    returns: np.ndarray,
    slot_ints: np.ndarray,
    slot_floats: np.ndarray,
    table: np.ndarray,
    mask: np.ndarray,
    task_ints: np.ndarray,
    records: np.ndarray,
    logs: np.ndarray,
    settings: np.ndarray,
    scales: np.ndarray,
) -> int:
    """Advance every active lane by one step (`play`), in place, and observe every lane.

    Args:
        chosen: (B, M) node actions, as `claims` reads them.
        takes: (B, M) bool, `claims` of ``chosen``: made here if ``claim``, else given.
        claim: whether to make ``takes``.
        obs: (B, M, D) float32, where every lane's node observations are written, or
            (B, 1, S), where its state alone is (`observe_rows`).
        ready: (B·M,) int64, where the flat slots to re-estimate are written: trained without
            success, still holding that task, with a ready prefix; lanes in order, then nodes.
        lane: `Lanes.lane`; each lane's successes, conflicts and end are written into it.
        returns: `Lanes.returns`; each lane's reward is written into it.
        slot_ints: `Lanes.slot_ints`.
        slot_floats: `Lanes.slot_floats`.
        table: `Lanes.table`.
        mask: `Lanes.mask`.
        task_ints: `Lanes.task_ints`.
        records: `Lanes.records`.
        logs: the curve store's log-losses.
        settings: `Lanes.settings`.
        scales: `Lanes.scales`.

    Returns:
        How many slots ``ready`` holds. (Arrays made here would cost more to hand back.)
    """
    if claim:
        claims(chosen, mask, lane, takes)
    lanes = chosen.shape[0]
    k = mask.shape[1] - 2
    active = lane[:, ACTIVE] == 1
    num_trained = play(
        active, chosen, takes, ready, lane, returns, slot_ints, slot_floats, table, mask,
        task_ints, records, logs, settings, scales,
    )  # fmt: skip
    num_ready = 0
    for r in range(num_trained):
        j = ready[r]
        if mask[j // k, j % k] and slot_ints[CURSOR, j] >= settings[MIN_PREFIX]:
            ready[num_ready] = j
            num_ready += 1
    observe_rows(obs, np.arange(lanes), lane, table, settings, scales[HORIZON])
    return num_ready


@compiled
def play(
    playing: np.ndarray,
    chosen: np.ndarray,
    takes: np.ndarray,
    trained: np.ndarray,
    lane: np.ndarray,
    returns: np.ndarray,
    slot_ints: np.ndarray,
    slot_floats: np.ndarray,
    table: np.ndarray,
    mask: np.ndarray,
    task_ints: np.ndarray,
    records: np.ndarray,
    logs: np.ndarray,
    settings: np.ndarray,
    scales: np.ndarray,
) -> int:
    """Advance each lane of ``playing`` (B,) bool (active lanes) one step by its claims ``takes``.

    The arrays are `step`'s. The flat slots trained without success are written into
    ``trained`` (B·M,), lanes in order, then nodes; returns how many. The lanes are looped over
    here, not in a function called per lane: numba's calls (and inlined calls) with a dozen
    arrays cost about as much as a lane's step.
    """
    batches, min_prefix, edf, guard = (
        settings[BATCHES],
        settings[MIN_PREFIX],
        settings[EDF],
        settings[GUARD],
    )
    batch_scale, time_scale, beta = scales[BATCH_SCALE], scales[TIME_SCALE], scales[BETA]
    switch_cost, cluster = settings[SWITCH_COST], settings[CLUSTER]
    lanes, nodes = chosen.shape
    k = mask.shape[1] - 2
    width = task_ints.shape[2]
    won = np.empty(nodes, np.int64)
    num_trained = 0
    for b in range(lanes):
        if not playing[b]:
            continue
        now = lane[b, T] + 1
        # -- statistics at the decision point
        lane[b, CONFLICTS] += lane[b, STEP_CONFLICTS]
        if lane[b, NUM_OCCUPIED] == k:
            lane[b, FULL] += 1
        lane[b, WAITING_SUM] += lane[b, NUM_WAITING]
        # -- steps 2-3: served slots train; those reaching the target succeed and leave
        num_won = 0
        for i in range(nodes):
            if not takes[b, i]:
                continue
            j = b * k + chosen[b, i]
            lane[b, BUSY] += 1
            if _resumes(slot_ints, j, i, now):
                lane[b, SWITCHES] += 1
                slot_ints[RESTORING, j] = switch_cost
            slot_ints[NODE, j], slot_ints[TRAINED_AT, j] = i, now
            if cluster >= 0:
                table[j, cluster] = (i + 1) / nodes
            if slot_ints[RESTORING, j] > 0:  # the node restores the task: it trains nothing
                slot_ints[RESTORING, j] -= 1
                lane[b, SWITCH_STEPS] += 1
                continue
            start = slot_ints[CURSOR, j]
            n = min(start + batches * settings[SPEEDS + i], slot_ints[LAST, j], slot_ints[CROSSING, j])
            log_loss = logs[slot_ints[OFFSET, j] + n]
            log_initial = slot_floats[LOG_INITIAL, j]
            q = (log_initial - max(log_loss, slot_floats[LOG_TARGET, j])) / slot_floats[LOG_SPAN, j]
            q = max(q, 0.0)
            if guard and n == 0:
                q = 0.0
            if n >= min_prefix and start < min_prefix:
                lane[b, READY_DELAY] += now - slot_ints[ARRIVAL, j]
                lane[b, READY_COUNT] += 1
                table[j, READY_COL] = 1.0
            slot_ints[CURSOR, j] = n
            slot_floats[PROGRESS, j] = q
            table[j, LOG_LOSS_COL] = log_loss - log_initial
            table[j, BATCHES_COL] = min(n / batch_scale, OBS_BOUND)
            table[j, PROGRESS_COL] = q
            if n == slot_ints[CROSSING, j]:
                won[num_won] = j
                num_won += 1
            else:
                trained[num_trained] = j
                num_trained += 1
        for w in range(num_won):  # they leave before deadlines are looked at
            _ended(
                task_ints, b, slot_ints[INDEX, won[w]], COMPLETED, slot_ints[CURSOR, won[w]], now
            )
            clear_slot(won[w], lane, slot_ints, slot_floats, table, mask)
        lane[b, STEP_SUCCESSES] = num_won
        lane[b, SUCCESSES] += num_won
        # -- step 4: tasks whose deadline has come fail and leave, in slots and waiting
        for j in range(b * k, (b + 1) * k):
            if mask[b, j - b * k] and slot_ints[DEADLINE, j] <= now:
                lane[b, FAILURES] += 1
                _ended(task_ints, b, slot_ints[INDEX, j], FAILED, slot_ints[CURSOR, j], now)
                clear_slot(j, lane, slot_ints, slot_floats, table, mask)
        if lane[b, WAITING_DEADLINE] <= now:
            earliest = NEVER
            for i in range(width):
                if not task_ints[TASK_WAITING, b, i]:
                    continue
                if task_ints[TASK_DEADLINE, b, i] <= now:
                    task_ints[TASK_WAITING, b, i] = 0
                    lane[b, NUM_WAITING] -= 1
                    lane[b, FAILURES] += 1
                    _ended(task_ints, b, i, FAILED, 0, now)
                else:
                    earliest = min(earliest, task_ints[TASK_DEADLINE, b, i])
            lane[b, WAITING_DEADLINE] = earliest
        # -- the clock moves on
        lane[b, T] = now
        for j in range(b * k, (b + 1) * k):
            table[j, TIME_LEFT_COL] -= slot_floats[SLOT_SCALE, j]
            if cluster >= 0 and slot_ints[NODE, j] >= 0:  # what resuming on its node costs
                resumed = slot_ints[TRAINED_AT, j] == now
                cost = slot_ints[RESTORING, j] if resumed else switch_cost
                table[j, cluster + 1] = cost / time_scale
        # -- step 5: arrivals join the queue; step 6: waiting tasks fill the lowest free slots
        while lane[b, NEXT_ARRIVAL] == now:
            i = lane[b, NEXT]
            lane[b, NEXT] = i + 1
            lane[b, NEXT_ARRIVAL] = task_ints[TASK_ARRIVAL, b, i + 1]
            task_ints[TASK_WAITING, b, i] = 1
            lane[b, NUM_WAITING] += 1
            lane[b, WAITING_DEADLINE] = min(
                lane[b, WAITING_DEADLINE], task_ints[TASK_DEADLINE, b, i]
            )
        while lane[b, NUM_WAITING] > 0 and lane[b, NUM_OCCUPIED] < k:
            pick = _pick(task_ints[TASK_WAITING, b], task_ints[TASK_DEADLINE, b], edf)
            _fill(b, now, time_scale, records[b, pick], lane, slot_ints, slot_floats, table, mask)
            task_ints[TASK_WAITING, b, pick] = 0
            lane[b, NUM_WAITING] -= 1
            if lane[b, NUM_WAITING] == 0:
                lane[b, WAITING_DEADLINE] = NEVER
        # -- the team reward (design §2): successes plus beta times the potential's change
        returns[b, REWARD] = num_won
        if beta != 0.0:
            potential = 0.0
            for j in range(b * k, (b + 1) * k):  # left to right over the slots
                potential = potential + slot_floats[PROGRESS, j]
            returns[b, REWARD] = num_won + beta * (potential - returns[b, POTENTIAL])
            returns[b, POTENTIAL] = potential
        # -- the end: no task can arrive any more and none remains, or max_steps
        lane[b, ENDED] = RUNNING
        if now >= settings[ARRIVAL_END] and lane[b, NUM_OCCUPIED] + lane[b, NUM_WAITING] == 0:
            lane[b, ENDED] = TERMINATED
        elif now >= settings[MAX_STEPS]:
            lane[b, ENDED] = TRUNCATED
    return num_trained


@compiled
def clear_slot(
    j: int,
    lane: np.ndarray,
    slot_ints: np.ndarray,
    slot_floats: np.ndarray,
    table: np.ndarray,
    mask: np.ndarray,
) -> None:
    """Free flat slot ``j``, restoring the neutral values (EMPTY_INTS, EMPTY_FLOATS, zeros)."""
    k = mask.shape[1] - 2
    b = j // k
    mask[b, j % k] = 0
    lane[b, NUM_OCCUPIED] -= 1
    lane[b, VERSION] += 1
    for row in range(EMPTY_INTS.size):  # element loops: slice assignments compile slowly
        slot_ints[row, j] = EMPTY_INTS[row]
    for row in range(EMPTY_FLOATS.size):
        slot_floats[row, j] = EMPTY_FLOATS[row]
    for c in range(table.shape[1]):
        table[j, c] = 0.0


@compiled
def _resumes(slot_ints: np.ndarray, j: int, node: int, now: int) -> bool:
    """Whether ``node`` training flat slot ``j`` at step ``now`` resumes its task (a switch):
    the task trained before, on another node or not at the step before."""
    last = slot_ints[NODE, j]
    return last >= 0 and (last != node or slot_ints[TRAINED_AT, j] != now - 1)


@compiled
def _ended(task_ints: np.ndarray, b: int, i: int, outcome: int, trained: int, now: int) -> None:
    """Lane ``b``'s task ``i`` left at step ``now`` with ``outcome``, ``trained`` batches in."""
    task_ints[TASK_OUTCOME, b, i] = outcome
    task_ints[TASK_TRAINED, b, i] = trained
    task_ints[TASK_ENDED, b, i] = now


@compiled
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


@compiled
def _fill(
    b: int,
    now: int,
    time_scale: float,
    record: np.ndarray,
    lane: np.ndarray,
    slot_ints: np.ndarray,
    slot_floats: np.ndarray,
    table: np.ndarray,
    mask: np.ndarray,
) -> None:
    """Put the task of ``record`` (`Lanes.records`) into lane ``b``'s lowest free slot."""
    k = mask.shape[1] - 2
    a = 0
    while mask[b, a]:
        a += 1
    j = b * k + a
    for row in range(RECORD_INTS):  # exact: small ints as floats
        slot_ints[CROSSING + row, j] = np.int64(record[row])
    for row in range(RECORD_FLOATS):
        slot_floats[TARGET + row, j] = record[RECORD_INTS + row]
    for c in range(table.shape[1]):
        table[j, c] = record[RECORD_INTS + RECORD_FLOATS + c]
    table[j, TIME_LEFT_COL] = (record[RECORD_DEADLINE] - now) / time_scale
    slot_floats[SLOT_SCALE, j] = 1.0 / time_scale
    mask[b, a] = 1
    lane[b, NUM_OCCUPIED] += 1
    lane[b, VERSION] += 1


@compiled
def _speeds_shown(settings: np.ndarray) -> int:
    """The node-speed columns of a state: M once the cluster is shown, else 0."""
    return settings.size - SPEEDS if settings[CLUSTER] >= 0 else 0


@compiled
def observe_rows(
    obs: np.ndarray,
    lanes: np.ndarray,
    lane: np.ndarray,
    table: np.ndarray,
    settings: np.ndarray,
    horizon: float,
) -> None:
    """Write into ``obs`` (L, R, D) what each of ``lanes`` shows (the lanes of ``settings``).

    Node observations: R = M rows of D = M + S, a node's one-hot id, then the state. The state
    alone: R = 1 row of D = S. The state: the global features (t / horizon, at most OBS_BOUND;
    waiting / K; nodes beyond the occupied slots / M), each node's speed once the cluster is
    shown, then the K slot blocks of ``table`` (B·K, F). An inactive lane's rows are 0. Each
    lane's row is made once in a float32 buffer and copied to its R rows.
    """
    rows, width = obs.shape[1], obs.shape[2]
    k = table.shape[0] // lane.shape[0]
    nodes, speeds = settings.size - SPEEDS, _speeds_shown(settings)
    size = k * table.shape[1]
    ids = width - GLOBALS - speeds - size  # the one-hot columns: M, or 0 for the state alone
    start = ids + GLOBALS + speeds
    blocks = table.reshape(-1)  # lane b's slot blocks are blocks[b * size : (b + 1) * size]
    row = np.zeros(width, np.float32)  # a lane's row before its node's one-hot
    for i in range(speeds):
        row[ids + GLOBALS + i] = settings[SPEEDS + i]
    for r in range(lanes.size):  # element loops: slice assignments take numba seconds to compile
        b = lanes[r]
        if lane[b, ACTIVE] == 0:
            for i in range(rows):
                for c in range(width):
                    obs[r, i, c] = 0.0
            continue
        row[ids] = min(lane[b, T] / horizon, OBS_BOUND)
        row[ids + 1] = lane[b, NUM_WAITING] / k
        row[ids + 2] = max(nodes - lane[b, NUM_OCCUPIED], 0) / nodes
        for c in range(size):
            row[start + c] = blocks[b * size + c]
        for i in range(rows):
            for c in range(width):
                obs[r, i, c] = row[c]
            if ids:
                obs[r, i, i] = 1.0


# -- the event form (`coreenv.core.events`): a lane holds its action until its event ------------


@inlined
def decides(
    now: np.ndarray, last: np.ndarray, since: np.ndarray, b: int, hold: int, feasibility: bool
) -> bool:
    """Whether lane ``b`` decides at this step (`coreenv.core.events`' rule), remembering this step.

    ``now``: (K, F) its slot table (float64 or float32, compared as observed: float32);
    ``last``: (K, F) float32 its table at its last step, whose `RULE_COLUMNS` are set to
    ``now``'s; ``since``: (B,) steps since each lane decided, ``since[b]`` counted on (0 once it
    decides).
    """
    due = since[b] + 1 >= hold
    for s in range(now.shape[0]):
        for c in RULE_COLUMNS:
            seen, before = np.float32(now[s, c]), last[s, c]
            if c == BATCHES_COL:  # fewer batches: another task took the slot
                due |= seen < before
            elif c == P_SUCCESS_COL:
                due |= feasibility and (seen > 0.5) != (before > 0.5)
            else:
                due |= seen != before
            last[s, c] = seen
    since[b] = 0 if due else since[b] + 1
    return due


@compiled
def due_rows(
    tables: np.ndarray,
    last: np.ndarray,
    since: np.ndarray,
    rows: np.ndarray,
    hold: int,
    feasibility: bool,
    due: np.ndarray,
) -> None:
    """`decides` for lanes ``rows`` of (B, K, F) ``last``, from their (L, K, F) ``tables``.

    ``due``: (L,) bool, where whether each decides is written (`DecisionEvents`).
    """
    for r in range(rows.size):
        due[r] = decides(tables[r], last[rows[r]], since, rows[r], hold, feasibility)


HELD_SUCCESSES, HELD_CONFLICTS, HELD_ENDED = range(3)
"""Columns of what a held step played per lane (``outcome``): tasks completed, summed; node
actions turned into idling at its first step; its `ENDED` after its last step."""


@compiled
def settle(
    holding: np.ndarray,
    lane: np.ndarray,
    returns: np.ndarray,
    table: np.ndarray,
    last: np.ndarray,
    since: np.ndarray,
    outcome: np.ndarray,
    rewards: np.ndarray,
    elapsed: np.ndarray,
    hold: int,
    feasibility: bool,
) -> None:
    """Count the step each lane of ``holding`` (B,) bool just played into its held step.

    Whether it holds on goes into ``holding``: it runs and does not decide (`decides`).
    ``lane``, ``returns``, ``table``: `Lanes`' arrays; ``last`` (B, K, F), ``since`` (B,): the
    rule's memory (`DecisionEvents`); ``outcome`` (B, 3) int64 (columns `HELD_SUCCESSES`,
    `HELD_CONFLICTS`, `HELD_ENDED`), ``rewards`` (B,) summed and ``elapsed`` (B,) steps: 0
    before the first step.
    """
    k = last.shape[1]
    for b in range(holding.size):
        if not holding[b]:
            continue
        if elapsed[b] == 0:
            outcome[b, HELD_CONFLICTS] = lane[b, STEP_CONFLICTS]
        elapsed[b] += 1
        outcome[b, HELD_SUCCESSES] += lane[b, STEP_SUCCESSES]
        outcome[b, HELD_ENDED] = lane[b, ENDED]
        rewards[b] += returns[b, REWARD]
        running = lane[b, ENDED] == RUNNING
        now = table[b * k : (b + 1) * k]
        holding[b] = running and not decides(now, last[b], since, b, hold, feasibility)


@compiled
def held_step(
    chosen: np.ndarray,
    takes: np.ndarray,
    obs: np.ndarray,
    lane: np.ndarray,
    returns: np.ndarray,
    slot_ints: np.ndarray,
    slot_floats: np.ndarray,
    table: np.ndarray,
    mask: np.ndarray,
    task_ints: np.ndarray,
    records: np.ndarray,
    logs: np.ndarray,
    settings: np.ndarray,
    scales: np.ndarray,
    last: np.ndarray,
    since: np.ndarray,
    outcome: np.ndarray,
    rewards: np.ndarray,
    elapsed: np.ndarray,
    hold: int,
    feasibility: bool,
) -> None:
    """The event form's step in one call, when no predictor runs between steps.

    Every active lane plays ``chosen`` (claimed once into ``takes``: a held table keeps its
    occupied slots, so its claims) step after step until it ends or `decides`, `settle` counting
    each step; then every lane is observed into ``obs``. The arrays are `step`'s and
    `settle`'s.
    """
    claims(chosen, mask, lane, takes)
    holding = lane[:, ACTIVE] == 1
    trained = np.empty(takes.size, np.int64)
    while holding.any():  # rounds: the lanes still holding play on together
        play(
            holding, chosen, takes, trained, lane, returns, slot_ints, slot_floats, table, mask,
            task_ints, records, logs, settings, scales,
        )  # fmt: skip
        settle(
            holding, lane, returns, table, last, since, outcome, rewards, elapsed, hold, feasibility
        )
    observe_rows(obs, np.arange(chosen.shape[0]), lane, table, settings, scales[HORIZON])
