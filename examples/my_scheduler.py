"""A scheduler of your own, in your own file, reading the predictor's estimates from `env.view()`.

This is the tutorial's example (docs/tutorial.md). Run it beside the baselines and MARA from this
folder::

    coreenv sweep --methods fifo edf lara mara oracle my_scheduler:ShortestHopeful

The sweep imports ``my_scheduler`` from the current directory, as ``python -m`` would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mara_agents.schedulers import Scheduler, serve_in_order


class ShortestHopeful(Scheduler):
    """Serve the tasks estimated to finish in time, fewest remaining steps first.

    Then tasks still too new for an estimate (earliest deadline first, so they soon get one),
    then the rest. It reads the episode through ``self.env.view()``, a `coreenv.SchedulerView`
    whose estimates are those of the predictor this class declares below (the sweep and
    `mara_agents.evaluate` attach it), so it plays every cluster the environment makes.
    """

    name = "shortest_hopeful"  # the label of its rows and tables
    observation_predictor = "wls"  # or "fm" (needs torch), a Predictor instance, or None

    def __init__(self, min_chance: float = 0.5) -> None:
        self.min_chance = min_chance  # the estimated chance of success a task needs to be hopeful

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """Nodes take slots in order: hopeful by remaining work, unready by deadline, the rest."""
        view = self.env.view()  # this step's snapshot of one episode: index 0
        slots = np.flatnonzero(view.occupied[0])
        time_left = view.deadline[0, slots] - view.t[0]  # steps to the deadline
        remaining = view.est_remaining[0, slots] / view.batches_per_step[0]  # steps, estimated
        ready = view.batches[0, slots] >= self.env.config.min_prefix  # else no estimate yet (0)
        chance = view.est_p_success[0, slots]
        hopeful = ready & (remaining <= time_left) & (chance > self.min_chance)
        group = np.where(hopeful, 0, np.where(~ready, 1, 2))
        # np.lexsort sorts by the last key first: the group, then remaining work or deadline
        order = np.lexsort((np.where(hopeful, remaining, time_left), group))
        return serve_in_order(self.env, slots[order])
