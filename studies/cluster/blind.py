"""Planners blind to the cluster: what reading node speeds and the switch cost is worth.

``BlindLARA`` and ``BlindHOP`` see the view of a cluster of equal nodes with free moves (the
speeds, the switch cost, the last nodes and the resume costs taken out), so they plan on M equal
nodes and node i trains the i-th task of their order, as they did before they read the cluster.
Compare them with ``lara`` and ``hop`` on the same episodes:

    coreenv sweep --clusters "4 mixed_costly" --methods lara studies.cluster.blind:BlindLARA
"""

from __future__ import annotations

import dataclasses

import numpy as np

from coreenv import SchedulerView
from mara_agents.schedulers import HOP, LARA
from mara_agents.schedulers.hop import HOP_TUNED

__all__ = ["BlindHOP", "BlindLARA", "blind"]


def blind(view: SchedulerView) -> SchedulerView:
    """``view`` as a scheduler that knows nothing of the cluster sees it."""
    configs = tuple(c.replace(node_speeds=None, switch_cost=0) for c in view.configs)
    return dataclasses.replace(view, configs=configs, last_node=None, resume_cost=None)


class BlindLARA(LARA):
    """LARA (WLS) planning as if the nodes were equal and moves free."""

    name = "lara_blind"

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """LARA's actions on the `blind` view."""
        return super().act_view(blind(view))


class BlindHOP(HOP):
    """HOP-FM (the sweep's ``hop``, its tuned settings) planning as if the nodes were equal and
    moves free."""

    name = "hop_blind"

    def __init__(self) -> None:
        super().__init__(config=HOP_TUNED)

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """HOP's actions on the `blind` view."""
        return super().act_view(blind(view))
