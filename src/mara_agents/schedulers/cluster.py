"""What the planners (LARA, HOP, the oracle) read of the cluster: node speeds and the switch cost.

Design §4 (planning on the cluster). A plan counts time in steps of the fastest node it plans
on: a task needing ``R`` batches needs ``ceil(R / rate)`` such steps, and the nodes give
``sum(speeds) / max(speeds)`` fastest-node steps per step (a relaxation: each task takes at most
one node, so at most the fastest's rate). A task that would have to be restored before it
trains again has that many steps fewer before its deadline. On a cluster of equal nodes without
a switch cost all of this is the plan on M nodes of ``batches_per_step`` it always was.

Nodes are then given out fastest first in the plan's order; with a switch cost, a served task
whose last node is still free keeps it, so that planned work does not pay for moving.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coreenv import SchedulerView

__all__ = ["assign_nodes", "plan_capacity", "restore_steps"]


def plan_capacity(view: SchedulerView, e: int, taken: int) -> tuple[int, float]:
    """(batches per step of the fastest node, nodes in its units) left to episode ``e``'s plan.

    The ``taken`` fastest nodes go to what the order puts first (exploring tasks), as
    `assign_nodes` gives them out; (``batches_per_step``, 0.0) when none is left.
    """
    config = view.configs[e]
    speeds = np.sort(np.asarray(config.speeds))[::-1][taken:]
    if speeds.size == 0:
        return config.batches_per_step, 0.0
    return config.batches_per_step * int(speeds[0]), float(speeds.sum() / speeds[0])


def restore_steps(view: SchedulerView, e: int, slots: np.ndarray) -> np.ndarray:
    """(len(slots),) steps the tasks of ``slots`` would lose before training again on their
    last node (`SchedulerView.resume_cost`; 0 for a view without it)."""
    if view.resume_cost is None:
        return np.zeros(len(slots), np.int64)
    return view.resume_cost[e, slots]


def assign_nodes(view: SchedulerView, orders: Sequence[np.ndarray]) -> np.ndarray:
    """(E, M) actions: episode e serves the first M slots of ``orders[e]``; the rest idle.

    The slots take nodes fastest first (ties: the lower node), in order. With a switch cost, a
    served slot whose last node is still free takes that node first.
    """
    num_nodes, idle = view.num_nodes, view.num_slots
    actions = np.full((len(orders), num_nodes), idle, np.int64)
    for e, order in enumerate(orders):
        served = np.asarray(order[:num_nodes], np.int64)
        fastest = np.argsort(-np.asarray(view.configs[e].speeds), kind="stable")
        free = np.ones(num_nodes, bool)
        moving = served
        if view.configs[e].switch_cost > 0 and view.last_node is not None:
            moving = []
            for slot in served.tolist():
                node = view.last_node[e, slot]
                if node >= 0 and free[node]:
                    actions[e, node], free[node] = slot, False
                else:
                    moving.append(slot)
        nodes = fastest[free[fastest]]
        actions[e, nodes[: len(moving)]] = moving
    return actions
