"""The shells' observation spaces (design §2): node one-hot, global features, one block per slot.

The observations themselves are written by the compiled engine (`engine.observe_rows`).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from coreenv.config import EnvConfig
from coreenv.core.features import OBS_BOUND, observation_size

__all__ = ["node_observations", "observation_space", "state_space"]


def state_space(config: EnvConfig) -> spaces.Box:
    """Box of `CoreEnv.state`: the global features, then the K slot blocks."""
    size = observation_size(config) - config.num_nodes
    return spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32)


def observation_space(config: EnvConfig) -> spaces.Dict:
    """A node's observation: ``{"observation": Box, "action_mask": Box of int8 {0, 1}}``."""
    size = observation_size(config)
    return spaces.Dict(
        {
            "observation": spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32),
            "action_mask": spaces.Box(0, 1, (config.num_slots + 1,), np.int8),
        }
    )


def node_observations(states: np.ndarray, active: np.ndarray, num_nodes: int) -> np.ndarray:
    """(B, M, M + S) float32 node observations from (B, S) states, as the engine writes them.

    Each node's row is its one-hot id, then its lane's state; an inactive lane's rows are 0 (its
    state is 0 too). ``active``: (B,) bool.
    """
    b, size = states.shape
    obs = np.zeros((b, num_nodes, num_nodes + size), np.float32)
    obs[:, :, num_nodes:] = states[:, None]
    nodes = np.arange(num_nodes)
    obs[:, nodes, nodes] = np.asarray(active, np.float32)[:, None]
    return obs
