"""Stable-Baselines3's vector form of CoRE-Learning: coreenv's vector envs as an SB3 `VecEnv`.

SB3 (and sb3-contrib's `MaskablePPO`) train on their own `VecEnv` API, not Gymnasium's vector
one; this adapter gives them the batched engine: N lanes in one process of the joint form
(`coreenv.CoreVectorEnv`) or the sequential form (`coreenv.SequentialVectorEnv`), with the action
masks `MaskablePPO` reads through ``env_method("action_masks")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from coreenv import CoreVectorEnv, SequentialVectorEnv

__all__ = ["SB3VecEnv"]

_PER_LANE = ("action_masks", "metrics")
"""The methods `SB3VecEnv.env_method` answers lane by lane."""


class SB3VecEnv(VecEnv):
    """A `CoreVectorEnv` (its ``"state"`` view) or `SequentialVectorEnv` seen by Stable-Baselines3.

    Seeding follows SB3: ``seed(s)`` then ``reset()`` starts lane i on seed ``s + i``; later
    episodes follow `coreenv.shells.vector.LaneSeeds`. An ended lane's ``infos[i]`` carries
    ``terminal_observation``, ``TimeLimit.truncated`` and the episode's ``metrics``.
    """

    def __init__(self, envs: CoreVectorEnv | SequentialVectorEnv) -> None:
        if isinstance(envs, CoreVectorEnv) and envs.view != "state":
            raise ValueError(
                f"SB3VecEnv needs the 'state' view (one controller), got view {envs.view!r}."
            )
        self.envs = envs
        super().__init__(envs.num_envs, envs.single_observation_space, envs.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        """Start every lane (on the seeds given to `seed`, if any, else continuing)."""
        first = self._seeds[0]
        obs, _ = self.envs.reset(seed=first)
        self._reset_seeds()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the actions for `step_wait`: (N, M) node slots, or (N,) choices when sequential."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step every lane; (obs, rewards, dones, infos) in SB3's form."""
        obs, rewards, terminated, truncated, infos = self.envs.step(self._actions)
        lanes = [{"successes": int(s)} for s in infos["successes"]]
        for lane, elapsed in enumerate(infos.get("elapsed", ())):  # the event decision form
            lanes[lane]["elapsed"] = int(elapsed)
        for lane in np.flatnonzero(infos.get("_final_obs", ())).tolist():
            lanes[lane]["terminal_observation"] = infos["final_obs"][lane]
            lanes[lane]["TimeLimit.truncated"] = bool(truncated[lane] and not terminated[lane])
            metrics = infos["final_info"]["metrics"]
            lanes[lane]["metrics"] = {k: v[lane] for k, v in metrics.items() if k[0] != "_"}
        return obs, rewards.astype(np.float32), terminated | truncated, lanes

    def close(self) -> None:
        """Nothing to release."""

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector environment's attribute, once per lane asked (lanes share it)."""
        value = getattr(self.envs, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute every lane shares; per-lane values are refused."""
        if list(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError(f"lanes share {attr_name!r}: set it for all lanes (indices=None).")
        setattr(self.envs, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **kwargs: Any
    ) -> list[Any]:
        """Lane by lane: ``action_masks`` (each lane's flat mask) and ``metrics``."""
        if method_name not in _PER_LANE:
            raise AttributeError(
                f"SB3VecEnv answers env_method for {_PER_LANE}, not {method_name!r}."
            )
        rows = getattr(self.envs, method_name)(*method_args, **kwargs)
        return [rows[i] for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """No lane is a wrapped Gymnasium environment."""
        return [False for _ in self._get_indices(indices)]

    def action_masks(self) -> np.ndarray:
        """Each lane's flat mask, as the vector env's ``action_masks``."""
        return self.envs.action_masks()
