"""Deadline planning on M nodes from (estimated) remaining work: which tasks can all finish in time.

Shared by the clairvoyant oracle (true demand) and LARA (predicted demand). Each task needs
``steps`` more steps of one node and has ``time_left`` steps before its deadline; a task can use at
most one node per step.
"""

from __future__ import annotations

import numpy as np

__all__ = ["feasible", "plan", "select_feasible"]


def feasible(steps: np.ndarray, time_left: np.ndarray, num_nodes: int) -> bool:
    """Whether all tasks can finish on ``num_nodes`` nodes (at most one node per task per step).

    By each time D, task k must already have ``max(0, s_k - (d_k - D)^+)`` steps done (afterwards
    it gets at most one per step), and M nodes give at most ``M·D`` steps by D. These conditions,
    with ``s_k <= d_k``, decide feasibility; they only need checking where their piecewise-linear
    sides bend, at every ``d_k`` and ``d_k - s_k``.
    """
    if np.any(steps > time_left):
        return False
    checkpoints = np.concatenate([time_left, time_left - steps])
    checkpoints = checkpoints[checkpoints > 0]
    if checkpoints.size == 0:
        return True
    due = np.maximum(0, steps[None, :] - np.maximum(0, time_left[None, :] - checkpoints[:, None]))
    return bool(np.all(due.sum(axis=1) <= num_nodes * checkpoints))


def select_feasible(steps: np.ndarray, time_left: np.ndarray, num_nodes: int) -> np.ndarray:
    """A large set of tasks that can all finish (bool mask), by Moore–Hodgson's rule.

    Tasks are taken in deadline order; when the set stops being feasible, the task needing the most
    steps leaves it. Tasks that cannot finish even alone are never taken.
    """
    chosen = np.zeros(steps.size, bool)
    for k in np.lexsort((steps, time_left)):
        if steps[k] > time_left[k]:
            continue
        chosen[k] = True
        while not feasible(steps[chosen], time_left[chosen], num_nodes):
            members = np.flatnonzero(chosen)
            chosen[members[np.argmax(steps[members])]] = False
    return chosen


def plan(steps: np.ndarray, time_left: np.ndarray, num_nodes: int) -> np.ndarray:
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
