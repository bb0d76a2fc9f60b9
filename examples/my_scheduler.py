"""A scheduler of your own, in your own file: least slack first, read from the observation.

This is the tutorial's example (docs/tutorial.md). Run it beside the baselines and MARA from this
folder::

    python ../benchmarks/sweep_load.py --methods fifo edf lara mara oracle my_scheduler:LeastSlack

The sweep imports ``my_scheduler`` from the current directory, as ``python -m`` would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coreenv import SlotFeature
from mara_agents.schedulers import Scheduler, serve_in_order

GLOBAL = 3  # global features after the node's one-hot id: time, waiting, spare nodes


class LeastSlack(Scheduler):
    """Explore new tasks first, then serve the ready tasks with the least slack.

    Slack = time to deadline - estimated remaining steps, both read from the observation: the
    estimate features hold the estimates of the predictor this class declares below, which the
    sweep and `mara_agents.evaluate` attach to the environment.
    """

    name = "least_slack"
    observation_predictor = "wls"  # or "fm" (needs torch), a Predictor instance, or None

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """Nodes take slots in order: unready by deadline, then hopeful tasks by slack."""
        config = self.env.config
        first = observations[self.env.agents[0]]
        slots = first["observation"][config.num_nodes + GLOBAL :].reshape(config.num_slots, -1)
        occupied = np.flatnonzero(first["action_mask"][:-1])
        table = slots[occupied]
        time_left = table[:, SlotFeature.TIME_LEFT]  # both in units of the longest window
        slack = time_left - table[:, SlotFeature.EST_REMAINING] / config.batches_per_step
        ready = table[:, SlotFeature.READY] == 1
        hopeful = ready & (slack >= 0) & (table[:, SlotFeature.EST_P_SUCCESS] > 0.5)
        # lexsort: the last key is primary. Unready tasks (0), then hopeful (1), then the rest (2)
        group = np.where(~ready, 0, np.where(hopeful, 1, 2))
        order = np.lexsort((np.where(ready, slack, time_left), group))
        return serve_in_order(self.env, occupied[order])
