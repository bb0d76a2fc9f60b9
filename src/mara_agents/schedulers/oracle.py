"""The clairvoyant oracle: knows every task's true demand R*. An upper reference, not a method."""

from __future__ import annotations

import numpy as np

from coreenv import SchedulerView
from mara_agents.schedulers.base import Scheduler
from mara_agents.schedulers.cluster import assign_nodes, plan_capacity, restore_steps
from mara_agents.schedulers.planning import plan

__all__ = ["Oracle", "true_remaining"]


class Oracle(Scheduler):
    """Serve the largest set of tasks that can all still finish, earliest deadline first.

    Reads the hidden demand (a clairvoyant `coreenv.SchedulerView`'s ``remaining``); hopeless
    tasks (that could not finish even with a node every step) are never served. Plans on the
    cluster's speeds and switch cost as LARA does (`cluster`).
    """

    observation_predictor = None  # reads no estimates from the observation
    clairvoyant = True

    name = "oracle"

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """Plan on the true remaining steps of every occupied slot."""
        remaining = true_remaining(view, "the oracle")
        orders = []
        for e in range(view.num_episodes):
            occupied = np.flatnonzero(view.occupied[e])
            rate, nodes = plan_capacity(view, e, 0)
            steps = -(-remaining[e, occupied] // rate)
            time_left = view.deadline[e, occupied] - view.t[e] - restore_steps(view, e, occupied)
            orders.append(occupied[plan(steps, time_left, nodes)])
        return assign_nodes(view, orders)


def true_remaining(view: SchedulerView, reader: str) -> np.ndarray:
    """(E, K) the view's hidden truth, or ValueError naming ``reader`` when it has none to give.

    Its ``remaining`` exists only in a clairvoyant view, and a task set that cannot know a task's
    demand in advance (``live``) marks it -1.
    """
    if view.remaining is None:
        raise ValueError(f"{reader} needs a clairvoyant view: view(clairvoyant=True).")
    unknown = (view.remaining < 0).any(axis=1).nonzero()[0]
    if unknown.size:
        task_set = view.configs[unknown[0]].task_set
        raise ValueError(
            f"{reader} needs every task's true demand; this task set "
            f"({getattr(task_set, 'name', task_set)!r}) cannot know it in advance."
        )
    return view.remaining
