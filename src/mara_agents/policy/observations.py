"""The one conversion from an environment's observation dict to the arrays the policy reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["NodeObservations", "stack_observations"]


@dataclass(frozen=True)
class NodeObservations:
    """One step's observations of every node, as arrays."""

    obs: np.ndarray  # (M, obs_dim) float32, one row per node in the order given
    action_mask: np.ndarray  # (K + 1,) bool, shared by every node: occupied slots, then idle

    @property
    def occupied(self) -> np.ndarray:
        """(K,) bool: which slots hold a task (the action mask without its idle entry)."""
        return self.action_mask[:-1]


def stack_observations(
    observations: Mapping[str, Mapping[str, Any]], agents: Sequence[str]
) -> NodeObservations:
    """Stack ``{agent: {"observation", "action_mask"}}`` in the order of ``agents``.

    Every node sees the same slots, so the action mask is read from the first agent's.
    """
    obs = np.stack([observations[agent]["observation"] for agent in agents])
    return NodeObservations(obs, observations[agents[0]]["action_mask"].astype(bool))
