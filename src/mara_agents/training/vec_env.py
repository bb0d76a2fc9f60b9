"""Many episodes stepped together for rollouts, as arrays, restarting as they end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from coreenv import BatchedCore, CoreEnv, Predictor, make_config
from mara_agents.policy.observations import NodeObservations, stack_observations

__all__ = ["SeedCounter", "VecCoreEnv", "VecObservation", "VecStep"]


@dataclass(frozen=True)
class VecObservation:
    """What every environment shows the policy, stacked."""

    obs: np.ndarray  # (E, M, D) float32
    occupied: np.ndarray  # (E, K) bool


@dataclass(frozen=True)
class VecStep:
    """One step of every environment.

    ``obs`` and ``occupied`` are what the policy acts on next: for an environment whose episode
    ended at this step, the first observation of its next episode. ``final_obs`` keeps the
    observation each episode ended in (equal to ``obs`` where none ended), which a truncated
    episode's value is bootstrapped from.
    """

    obs: np.ndarray  # (E, M, D) float32
    occupied: np.ndarray  # (E, K) bool
    rewards: np.ndarray  # (E,) float32, the team reward
    terminated: np.ndarray  # (E,) bool: the episode reached its end state (nothing to bootstrap)
    truncated: np.ndarray  # (E,) bool: the episode was cut (by `EnvConfig.max_steps`)
    final_obs: np.ndarray  # (E, M, D) float32


class SeedCounter:
    """``seed, seed + 1, …`` without end; unlike `itertools.count` it pickles (for resumption)."""

    def __init__(self, seed: int) -> None:
        self.next = seed

    def __iter__(self) -> SeedCounter:
        return self

    def __next__(self) -> int:
        self.next += 1
        return self.next - 1


class VecCoreEnv:
    """``num_envs`` environments whose observations come back stacked as (E, M, obs_dim).

    An episode that ends is restarted at once with the next seed of this vector env (seeds
    ``seed, seed + 1, …`` in the order episodes start, environments in index order within a
    step), so rollouts never wait.

    Args:
        num_envs: E.
        seed: the first episode seed.
        predictor: attached to every environment (one shared instance, so its cache is shared).
        batched: step all episodes as one `coreenv.BatchedCore` (one predictor call per step);
            False steps one `CoreEnv` per episode, for curve sources the batched core cannot
            replay. Both give the same steps.
        overrides: `EnvConfig` fields.
    """

    def __init__(
        self,
        num_envs: int,
        seed: int,
        predictor: Predictor | None = None,
        batched: bool = True,
        **overrides: Any,
    ) -> None:
        self.config = make_config(None, **overrides)
        self.num_envs = num_envs
        self.seeds = SeedCounter(seed)
        self.core = BatchedCore(self.config, num_envs, predictor) if batched else None
        sequential = 0 if batched else num_envs
        self.envs = [CoreEnv(self.config, predictor=predictor) for _ in range(sequential)]
        self.agents = [f"node_{i}" for i in range(self.config.num_nodes)]
        self.finished: list[dict] = []  # metrics of the episodes ended since last taken

    @property
    def predictor(self) -> Predictor | None:
        """The predictor every environment uses."""
        return self.core.predictor if self.core is not None else self.envs[0].predictor

    @predictor.setter
    def predictor(self, predictor: Predictor | None) -> None:
        if self.core is not None:
            self.core.predictor = predictor
        for env in self.envs:
            env.predictor = predictor

    def reset(self) -> VecObservation:
        """Start every environment."""
        if self.core is not None:
            first = self.core.reset(self.seeds)
            return VecObservation(first.obs, first.action_mask[:, :-1].astype(bool))
        rows = [self._start(env) for env in self.envs]
        return VecObservation(np.stack([r.obs for r in rows]), np.stack([r.occupied for r in rows]))

    def step(self, actions: np.ndarray) -> VecStep:
        """Apply (E, M) actions; an environment whose episode ends starts its next one."""
        if self.core is not None:
            step = self.core.step(actions)
            self.finished += [metrics for _, _, metrics in step.finished]
            return VecStep(
                step.obs,
                step.action_mask[:, :-1].astype(bool),
                step.rewards.astype(np.float32),
                step.terminated,
                step.truncated,
                step.final_obs,
            )
        obs, occupied, ended_obs = [], [], {}
        rewards = np.zeros(self.num_envs, np.float32)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        for e, env in enumerate(self.envs):
            observations, reward, ended, cut, _ = env.step(
                dict(zip(self.agents, actions[e].tolist()))
            )
            first = self.agents[0]
            rewards[e] = reward[first]
            terminated[e], truncated[e] = ended[first], cut[first]
            row = stack_observations(observations, self.agents)
            if terminated[e] or truncated[e]:
                ended_obs[e] = row.obs
                self.finished.append(env.metrics())
                row = self._start(env)
            obs.append(row.obs)
            occupied.append(row.occupied)
        stacked = np.stack(obs)
        final_obs = stacked
        if ended_obs:  # only then do the final observations differ from the next ones
            final_obs = stacked.copy()
            for e, last in ended_obs.items():
                final_obs[e] = last
        return VecStep(stacked, np.stack(occupied), rewards, terminated, truncated, final_obs)

    def take_finished(self) -> list[dict]:
        """Metrics of the episodes that ended since the last call."""
        finished, self.finished = self.finished, []
        return finished

    def _start(self, env: CoreEnv) -> NodeObservations:
        observations, _ = env.reset(seed=next(self.seeds))
        return stack_observations(observations, self.agents)
