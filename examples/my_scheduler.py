"""A scheduler of your own, in your own file, reading the predictor's estimates in the observation.

This is the tutorial's example (docs/tutorial.md). Run it beside the baselines and MARA from this
folder::

    coreenv sweep --methods fifo edf lara mara oracle my_scheduler:ShortestHopeful

The sweep imports ``my_scheduler`` from the current directory, as ``python -m`` would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coreenv import SlotFeature
from mara_agents.schedulers import Scheduler, serve_in_order

GLOBAL = 3  # global features after the node's one-hot id: time, waiting, spare nodes


class ShortestHopeful(Scheduler):
    """Serve the tasks estimated to finish in time, fewest remaining batches first.

    Then tasks still too new for an estimate (earliest deadline first, so they soon get one),
    then the rest. Every quantity is read from the observation: the estimate features hold the
    estimates of the predictor this class declares below, which the sweep and
    `mara_agents.evaluate` attach to the environment.
    """

    name = "shortest_hopeful"
    observation_predictor = "wls"  # or "fm" (needs torch), a Predictor instance, or None

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """Nodes take slots in order: hopeful by remaining work, unready by deadline, the rest."""
        config = self.env.config
        first = observations[self.env.agents[0]]
        slots = first["observation"][config.num_nodes + GLOBAL :].reshape(config.num_slots, -1)
        occupied = np.flatnonzero(first["action_mask"][:-1])
        table = slots[occupied]
        time_left = table[:, SlotFeature.TIME_LEFT]  # (d - t) / the longest deadline window
        remaining = table[:, SlotFeature.EST_REMAINING]  # steps still needed, in the same unit
        ready = table[:, SlotFeature.READY] == 1
        hopeful = ready & (remaining <= time_left) & (table[:, SlotFeature.EST_P_SUCCESS] > 0.5)
        group = np.where(hopeful, 0, np.where(~ready, 1, 2))
        # np.lexsort sorts by the last key first: the group, then remaining work or deadline
        order = np.lexsort((np.where(hopeful, remaining, time_left), group))
        return serve_in_order(self.env, occupied[order])
