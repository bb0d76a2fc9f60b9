"""A centralised single-agent Gymnasium view of `CoreEnv`: one controller picks every node's action.

Made for single-agent RL libraries: the observation is the global state, the action a
``MultiDiscrete`` of node choices, and ``action_masks()`` is the flat mask sb3-contrib's
`MaskablePPO` expects. Conflicts between nodes are resolved by the environment (design §2).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coreenv.config import EnvConfig
from coreenv.shells.parallel import CoreEnv

__all__ = ["CoreGymEnv"]


class CoreGymEnv(gym.Env):
    """``gymnasium.make("coreenv/CoRE-v1", **overrides)``: `CoreEnv` seen by one central controller.

    Observation: `CoreEnv.state()`. Action: ``MultiDiscrete([K + 1] * M)``, one entry per node.
    Reward: the team reward. Info: ``successes``, ``invalid_actions`` (node -> reason) and, at the
    end, ``metrics``. ``decisions="events"`` holds each action until an event; the info then says
    how many steps ``elapsed``.

    Args:
        config: the environment settings (`EnvConfig`).
        options: `CoreEnv`'s keyword arguments (``predictor``, ``render_mode``, ``decisions`` and
            `EnvConfig` fields), handed to the `CoreEnv` it wraps (``self.env``).
    """

    metadata = CoreEnv.metadata

    def __init__(self, config: EnvConfig | None = None, **options: Any) -> None:
        self.env = CoreEnv(config, **options)
        self.config = self.env.config
        self.render_mode = self.env.render_mode
        self.observation_space = self.env.state_space
        m, k = self.config.num_nodes, self.config.num_slots
        self.action_space = spaces.MultiDiscrete(np.full(m, k + 1))

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """Start an episode (seeding as `CoreEnv.reset`)."""
        super().reset(seed=seed)
        self.env.reset(seed=seed, options=options)
        return self.env.state(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Apply the (M,) node actions."""
        action = np.asarray(action)
        if action.shape != self.action_space.shape:
            raise ValueError(
                f"action must have shape {self.action_space.shape} (one entry per node), "
                f"got shape {action.shape}."
            )
        agents = self.env.possible_agents
        _, rewards, terminations, truncations, infos = self.env.step(dict(zip(agents, action)))
        first = agents[0]
        info = {
            **({"elapsed": infos[first]["elapsed"]} if "elapsed" in infos[first] else {}),
            "successes": infos[first]["successes"],
            "invalid_actions": {
                a: i["invalid_action"] for a, i in infos.items() if "invalid_action" in i
            },
        }
        if "metrics" in infos[first]:
            info["metrics"] = infos[first]["metrics"]
        return self.env.state(), rewards[first], terminations[first], truncations[first], info

    def action_masks(self) -> np.ndarray:
        """(M · (K + 1),) bool: the nodes' masks, concatenated (sb3-contrib MaskablePPO layout)."""
        return self.env.action_masks().astype(bool).ravel()

    def render(self) -> str | np.ndarray | None:
        """As `CoreEnv.render`."""
        return self.env.render()

    def close(self) -> None:
        """Nothing to release."""
        self.env.close()
