"""Assembling observations (design §2): node one-hot, global features, then one block per slot."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from coreenv.config import EnvConfig
from coreenv.core.features import GLOBAL_FEATURES, OBS_BOUND, SlotFeature, slot_width
from coreenv.core.state import State

__all__ = ["node_observations", "observation_space", "state_space", "state_vector"]

_TIME_LEFT = int(SlotFeature.TIME_LEFT)


def state_vector(state: State, config: EnvConfig) -> np.ndarray:
    """The global view: global features, then the K slot blocks, flattened. Shape (3 + K·F,)."""
    return _observed_vector(state, config).copy()


def node_observations(state: State, config: EnvConfig, one_hot: np.ndarray) -> np.ndarray:
    """(M, M + 3 + K·F) float32: row i is node i's observation (its one-hot id, then the state).

    ``one_hot`` is an (M, M + 3 + K·F) template holding the one-hot ids and zeros elsewhere.
    """
    obs = one_hot.copy()
    obs[:, one_hot.shape[0] :] = _observed_vector(state, config)
    return obs


def _observed_vector(state: State, config: EnvConfig) -> np.ndarray:
    """``state.vector`` with what changes every step written in: the globals and time left."""
    vector = state.vector
    vector[0] = min(state.t / config.arrival_horizon, OBS_BOUND)
    vector[1] = len(state.waiting) / config.num_slots
    vector[2] = max(config.num_nodes - state.num_occupied, 0) / config.num_nodes
    # time to deadline changes every step for every task: written here rather than kept in the table
    vector[len(GLOBAL_FEATURES) + _TIME_LEFT :: slot_width(config)] = state.time_left
    return vector


def state_space(config: EnvConfig) -> spaces.Box:
    """Box of `state_vector`."""
    size = len(GLOBAL_FEATURES) + config.num_slots * slot_width(config)
    return spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32)


def observation_space(config: EnvConfig) -> spaces.Dict:
    """A node's observation: ``{"observation": Box, "action_mask": Box of int8 {0, 1}}``."""
    size = config.num_nodes + state_space(config).shape[0]
    return spaces.Dict(
        {
            "observation": spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32),
            "action_mask": spaces.Box(0, 1, (config.num_slots + 1,), np.int8),
        }
    )
