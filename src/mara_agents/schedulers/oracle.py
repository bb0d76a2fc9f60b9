"""The clairvoyant oracle: knows every task's true demand R*. An upper reference, not a method."""

from __future__ import annotations

from typing import Any

import numpy as np

from mara_agents.schedulers.base import Scheduler, serve_in_order
from mara_agents.schedulers.planning import plan

__all__ = ["Oracle"]


class Oracle(Scheduler):
    """Serve the largest set of tasks that can all still finish, earliest deadline first.

    Reads the hidden demand through ``env.oracle_view()``; hopeless tasks (that could not finish
    even with a node every step) are never served.
    """

    observation_predictor = None  # reads no estimates from the observation

    name = "oracle"

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """Plan on the true remaining steps of every occupied slot."""
        view = self.env.oracle_view()
        occupied = np.array([j for j, truth in enumerate(view.slots) if truth is not None], int)
        if occupied.size == 0:
            return serve_in_order(self.env, occupied)
        per_step = self.env.config.batches_per_step
        remaining = [view.slots[j].remaining for j in occupied]
        if None in remaining:
            raise ValueError(
                "the oracle needs every task's true demand; this task set "
                f"({self.env.source.name!r}) cannot know it in advance."
            )
        remaining = np.array(remaining)
        time_left = np.array([view.slots[j].deadline - view.t for j in occupied])
        order = plan(-(-remaining // per_step), time_left, self.env.config.num_nodes)
        return serve_in_order(self.env, occupied[order])
