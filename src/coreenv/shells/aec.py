"""The AEC (turn-based) form of `CoreEnv`: nodes act in index order under live masks."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from coreenv.core.features import OBS_BOUND
from coreenv.masks import live_mask
from coreenv.shells.parallel import parallel_env

__all__ = ["env", "raw_env"]


class raw_env(parallel_to_aec_wrapper):  # noqa: N801 - PettingZoo's name for the AEC class
    """The AEC (turn-based) environment without wrappers: nodes act in index order, live masks.

    It wraps the parallel `CoreEnv` (``self.env``); keyword arguments as `parallel_env` (its
    ``decisions`` too). A node's mask drops the slots the nodes before it took in the same step
    (`coreenv.masks.live_mask`), and its observation is the parallel one followed by K
    "taken" flags, so every joint action the masks admit is a matching.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(parallel_env(**kwargs))
        config = self.env.config
        inner = self.env.observation_space(self.possible_agents[0])
        size = inner["observation"].shape[0] + config.num_slots
        self._space = spaces.Dict(
            {
                "observation": spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32),
                "action_mask": inner["action_mask"],
            }
        )
        self._order = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._chosen: dict[str, Any] = {}

    def observation_space(self, agent: str) -> spaces.Dict:
        """A node's observation: the parallel one and K taken flags; its live action mask."""
        return self._space

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start an episode (as `CoreEnv.reset`); no slot is taken yet."""
        self._chosen = {}
        super().reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        """The selected node's action; the last node's completes the joint action."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            super().step(action)
            return
        last = self._agent_selector.is_last()
        self._chosen[agent] = action
        super().step(action)
        if last:
            self._chosen = {}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s view: slots taken by the nodes before it this step are flagged and masked."""
        inner = self._observations[agent]
        place = self._order[agent]
        chosen = [a for other, a in self._chosen.items() if self._order[other] < place]
        mask, taken = live_mask(inner["action_mask"], chosen)
        return {"observation": np.concatenate((inner["observation"], taken)), "action_mask": mask}


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment (`raw_env`) with PettingZoo's order-enforcing wrapper."""
    return OrderEnforcingWrapper(raw_env(**kwargs))
