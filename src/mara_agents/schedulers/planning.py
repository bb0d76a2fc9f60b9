"""Deadline planning on M nodes from (estimated) remaining work: which tasks can all finish in time.

Shared by the clairvoyant oracle (true demand), LARA (predicted demand) and HOP (sampled
demands, `select_feasible_many`). ``num_nodes`` may be fractional: nodes of mixed speeds counted
in units of the fastest (`cluster.plan_capacity`). Each task needs ``steps`` more steps of one node and has
``time_left`` steps before its deadline; a task can use at most one node per step.
"""

from __future__ import annotations

import numpy as np

__all__ = ["feasible", "plan", "select_feasible", "select_feasible_many"]


def work_due(steps: np.ndarray, time_left: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Checkpoints D (P,) and the work each task must have done by each, due (P, n).

    By time D, task k must already have ``max(0, s_k − (d_k − D)^+)`` steps done, since afterwards
    it gets at most one per step; M nodes give at most ``M·D`` steps by D. With ``s_k <= d_k`` these
    conditions decide feasibility, and they only need checking where their piecewise-linear sides
    bend: at every ``d_k`` and ``d_k − s_k``. Checking more points is harmless (every condition is
    necessary), so one set of checkpoints serves any subset of the tasks.
    """
    points = np.unique(np.concatenate([time_left, time_left - steps]))
    points = points[points > 0]
    due = np.maximum(0, steps[None, :] - np.maximum(0, time_left[None, :] - points[:, None]))
    return points, due


def feasible(steps: np.ndarray, time_left: np.ndarray, num_nodes: float) -> bool:
    """Whether all tasks can finish on ``num_nodes`` nodes (at most one node per task per step)."""
    if np.any(steps > time_left):
        return False
    points, due = work_due(steps, time_left)
    return bool(np.all(due.sum(axis=1) <= num_nodes * points))


def select_feasible(steps: np.ndarray, time_left: np.ndarray, num_nodes: float) -> np.ndarray:
    """A large set of tasks that can all finish (bool mask), by Moore–Hodgson's rule.

    Tasks are taken in deadline order; when the set stops being feasible, the task needing the most
    steps leaves it. Tasks that cannot finish even alone are never taken. The work due at every
    checkpoint is computed once and summed incrementally, so each test is one vector comparison.
    """
    chosen = np.zeros(steps.size, bool)
    alone = steps <= time_left
    if not alone.any():
        return chosen
    points, due = work_due(steps[alone], time_left[alone])
    capacity = num_nodes * points
    candidates = np.flatnonzero(alone)
    total = np.zeros(points.size)
    for column in np.lexsort((steps[alone], time_left[alone])):
        chosen[candidates[column]] = True
        total += due[:, column]
        while np.any(total > capacity):
            members = np.flatnonzero(chosen[candidates])
            drop = members[np.argmax(steps[candidates[members]])]
            chosen[candidates[drop]] = False
            total -= due[:, drop]
    return chosen


def select_feasible_many(steps: np.ndarray, time_left: np.ndarray, num_nodes: float) -> np.ndarray:
    """(R, S) `select_feasible` of each of S samples of the steps of R tasks, at once.

    Args:
        steps: (R, S) remaining steps of R tasks in S samples (``inf``: never).
        time_left: (R,) steps to each task's deadline, shared by the samples.
        num_nodes: nodes to plan on.

    The same Moore–Hodgson rule, sample by sample (tasks by deadline, then fewest steps; on
    overload the chosen task needing the most steps leaves, the lowest index among equals), on
    one set of checkpoints: every sample's bends. Extra checkpoints are harmless, since each
    condition is necessary (`work_due`), so the masks equal ``select_feasible``'s.
    """
    tasks, samples = steps.shape
    chosen = np.zeros((tasks, samples), bool)
    alone = steps <= time_left[:, None]  # (R, S)
    if not alone.any():
        return chosen
    ends = np.where(alone, time_left[:, None] - steps, 0.0)  # (R, S) latest start of each
    points = np.unique(np.concatenate([time_left, ends.ravel()]))
    points = points[points > 0]  # (P,)
    slack = np.maximum(0.0, time_left[None, :] - points[:, None])  # (P, R)
    due = np.maximum(0.0, np.where(alone, steps, 0.0)[None] - slack[:, :, None])  # (P, R, S)
    capacity = num_nodes * points[:, None]  # (P, 1)
    deadlines = np.broadcast_to(time_left[:, None], steps.shape)
    order = np.lexsort((steps, deadlines), axis=0)  # (R, S) each sample's task order
    lanes = np.arange(samples)
    total = np.zeros((points.size, samples))  # (P, S)
    for position in range(tasks):
        task = order[position]  # (S,)
        take = alone[task, lanes]
        chosen[task[take], lanes[take]] = True
        total += np.where(take, due[:, task, lanes], 0.0)
        over = np.any(total > capacity, axis=0)  # (S,)
        while over.any():
            need = np.where(chosen[:, over], steps[:, over], -np.inf)  # (R, S_over)
            drop = np.argmax(need, axis=0)
            where = lanes[over]
            chosen[drop, where] = False
            total[:, where] -= due[:, drop, where]
            over = np.any(total > capacity, axis=0)
    return chosen


def plan(steps: np.ndarray, time_left: np.ndarray, num_nodes: float) -> np.ndarray:
    """Indices to serve, in order.

    First the feasible set by earliest deadline, then the other tasks that could still finish
    alone, least slack first (they use nodes the set leaves over).
    """
    chosen = select_feasible(steps, time_left, num_nodes)
    first = np.flatnonzero(chosen)
    first = first[np.lexsort((steps[first], time_left[first]))]
    spare = np.flatnonzero(~chosen & (steps <= time_left))
    spare = spare[np.argsort(time_left[spare] - steps[spare], kind="stable")]
    return np.concatenate([first, spare])
