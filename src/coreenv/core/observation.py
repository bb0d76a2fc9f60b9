"""The observation's spaces (design §2): node one-hot, global features, then one block per slot.

The observations themselves are written by the compiled engine (`engine.observe`).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from coreenv.config import EnvConfig
from coreenv.core.features import OBS_BOUND, observation_size

__all__ = ["observation_space", "state_space"]


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
