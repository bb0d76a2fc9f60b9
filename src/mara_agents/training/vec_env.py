"""Many `CoreEnv` episodes stepped together for rollouts, as arrays, restarting as they end."""

from __future__ import annotations

from typing import Any

import numpy as np

from coreenv import CoreEnv, Predictor

__all__ = ["VecCoreEnv"]


class VecCoreEnv:
    """``num_envs`` environments whose observations come back stacked as (E, M, obs_dim).

    An episode that ends is restarted at once with the next seed of this vector env (seeds
    ``seed, seed + 1, …`` in the order episodes start), so rollouts never wait.

    Args:
        num_envs: E.
        seed: the first episode seed.
        predictor: attached to every environment (one shared instance, so its cache is shared).
        overrides: `EnvConfig` fields.
    """

    def __init__(
        self, num_envs: int, seed: int, predictor: Predictor | None = None, **overrides: Any
    ) -> None:
        self.envs = [CoreEnv(predictor=predictor, **overrides) for _ in range(num_envs)]
        self.config = self.envs[0].config
        self.agents = self.envs[0].possible_agents
        self.next_seed = seed
        self.finished: list[dict] = []  # metrics of the episodes ended since last taken

    def reset(self) -> tuple[np.ndarray, np.ndarray]:
        """Start every environment; (obs (E, M, D) float32, occupied (E, K) bool)."""
        rows = [self._start(env) for env in self.envs]
        return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply (E, M) actions; returns (obs, occupied, rewards (E,), dones (E,))."""
        obs, occupied = [], []
        rewards = np.zeros(len(self.envs), np.float32)
        dones = np.zeros(len(self.envs), bool)
        for e, env in enumerate(self.envs):
            observations, reward, terminated, truncated, _ = env.step(
                dict(zip(self.agents, actions[e].tolist()))
            )
            rewards[e] = reward[self.agents[0]]
            if terminated[self.agents[0]] or truncated[self.agents[0]]:
                dones[e] = True
                self.finished.append(env.metrics())
                row = self._start(env)
            else:
                row = self._stack(observations)
            obs.append(row[0])
            occupied.append(row[1])
        return np.stack(obs), np.stack(occupied), rewards, dones

    def take_finished(self) -> list[dict]:
        """Metrics of the episodes that ended since the last call."""
        finished, self.finished = self.finished, []
        return finished

    def _start(self, env: CoreEnv) -> tuple[np.ndarray, np.ndarray]:
        observations, _ = env.reset(seed=self.next_seed)
        self.next_seed += 1
        return self._stack(observations)

    def _stack(self, observations: dict) -> tuple[np.ndarray, np.ndarray]:
        rows = [observations[a] for a in self.agents]
        return np.stack([r["observation"] for r in rows]), rows[0]["action_mask"][:-1].astype(bool)
