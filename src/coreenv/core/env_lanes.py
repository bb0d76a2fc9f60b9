"""`EnvLanes`: B `CoreEnv` episodes side by side behind `BatchedCore`'s reset and step.

`BatchedCore` steps every lane together, one step a call; in the event decision form each lane
plays as many steps as its held action lasts, so the vector forms run those lanes as `CoreEnv`s
(in one process, one after another) and show them as one batch. Each lane is exactly a `CoreEnv`
of that form; the vector form's tests check the lanes against single environments.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core.batched import (
    BatchedObservation,
    BatchedStep,
    checked_lanes,
    checked_lanes_actions,
)
from coreenv.core.env import CoreEnv
from coreenv.core.events import Decisions
from coreenv.predictor import Predictor

__all__ = ["EnvLanes"]


class EnvLanes:
    """``num_envs`` `CoreEnv` lanes of one config and decision form, with same-step auto-reset.

    Args:
        config: the environment settings, shared by every lane.
        num_envs: B, the number of lanes (>= 1).
        predictor: fills every lane's estimate features (one call per lane and step).
        decisions: when the nodes decide (`Decisions`).
    """

    def __init__(
        self, config: EnvConfig, num_envs: int, predictor: Predictor | None, decisions: Decisions
    ) -> None:
        self.config = config
        self.num_envs = checked_lanes(num_envs)
        self.envs = [
            CoreEnv(config, predictor=predictor, decisions=decisions) for _ in range(num_envs)
        ]
        self.agents = self.envs[0].possible_agents
        self.obs_dim = self.envs[0].observation_space(self.agents[0])["observation"].shape[0]
        self._obs = np.zeros((self.num_envs, len(self.agents), self.obs_dim), np.float32)
        self._seeds: Callable[[int], int] | None = None

    def reset(self, seeds: Callable[[int], int]) -> BatchedObservation:
        """Start every lane on ``seeds(lane)``, called again for each episode a lane starts."""
        self._seeds = seeds
        self.seeds = np.array([self._start(lane) for lane in range(self.num_envs)], np.int64)
        return BatchedObservation(self._obs, self._masks(), self._active(), self.seeds.copy())

    def step(self, actions: np.ndarray) -> BatchedStep:
        """Apply (B, M) actions: each lane plays its decision form's steps; ended lanes restart."""
        if self._seeds is None:
            raise RuntimeError("EnvLanes.step before reset: call reset(seeds) first.")
        b, first = self.num_envs, self.agents[0]
        actions = checked_lanes_actions(actions, b, len(self.agents), self.config.num_slots)
        rewards, successes = np.zeros(b), np.zeros(b, np.int64)
        terminated, truncated = np.zeros(b, bool), np.zeros(b, bool)
        conflicts, elapsed = np.zeros(b, np.int64), np.ones(b, np.int64)
        final_obs, finished = self._obs.copy(), []
        for lane, env in enumerate(self.envs):
            observations, reward, term, trunc, infos = env.step(
                dict(zip(self.agents, actions[lane]))
            )
            info = infos[first]
            rewards[lane], successes[lane] = reward[first], info["successes"]
            terminated[lane], truncated[lane] = term[first], trunc[first]
            conflicts[lane] = sum("invalid_action" in i for i in infos.values())
            elapsed[lane] = info.get("elapsed", 1)
            final_obs[lane] = _stacked(observations, self.agents)
            self._obs[lane] = final_obs[lane]
            if term[first] or trunc[first]:
                finished.append((lane, int(self.seeds[lane]), info["metrics"]))
                self.seeds[lane] = self._start(lane)
        return BatchedStep(
            self._obs.copy(),
            self._masks(),
            self._active(),
            self.seeds.copy(),
            rewards,
            successes,
            terminated,
            truncated,
            final_obs,
            conflicts,
            finished,
            elapsed,
        )

    def metrics(self) -> list[dict[str, float] | None]:
        """Design §2 metrics of each lane's running episode so far."""
        return [env.metrics() for env in self.envs]

    def _start(self, lane: int) -> int:
        seed = self._seeds(lane)
        observations, _ = self.envs[lane].reset(seed=seed)
        self._obs[lane] = _stacked(observations, self.agents)
        return seed

    def _masks(self) -> np.ndarray:
        return np.stack([env.action_masks()[0] for env in self.envs])

    def _active(self) -> np.ndarray:
        return np.ones(self.num_envs, bool)


def _stacked(observations: dict, agents: list[str]) -> np.ndarray:
    return np.stack([observations[agent]["observation"] for agent in agents])
