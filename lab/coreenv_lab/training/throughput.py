"""How many environment steps per second PPO training sees: rollouts alone, and with the update.

`benchmarks/bench_training.py` prints these for two lane counts, measured in the same run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import gymnasium as gym
import torch

from coreenv import Predictor
from mara_agents import seeds
from mara_agents.policy.mat import MAT, MATConfig
from mara_agents.training.held_ppo import HeldPPOConfig, HeldPPOTrainer
from mara_agents.training.lanes import rollout_lanes
from mara_agents.training.ppo import PPOConfig, PPOTrainer, ppo_epochs
from mara_agents.training.recipe import TRAINING_ENV

__all__ = ["Throughput", "cartpole_steps_per_second", "held_throughput", "training_throughput"]


@dataclass(frozen=True)
class Throughput:
    """Environment steps per second of one training setup."""

    rollout: float
    """Collecting rollouts only: policy passes, environment steps, predictor estimates."""
    training: float
    """Collecting and updating (PPO epochs over each rollout): what a training run sees."""
    steps: int
    """Environment steps timed."""


def training_throughput(
    predictor: Predictor | None,
    ppo: PPOConfig,
    updates: int = 2,
    shaping_beta: float = 1.0,
) -> Throughput:
    """Time ``updates`` PPO iterations of a fresh MAT on the training environment.

    One untimed iteration first, so one-off costs (allocation, the first predictor calls of a
    fresh cache region) are not counted; ``ppo.envs`` lanes roll out.
    """
    envs = rollout_lanes(ppo.envs, seeds.RL, predictor, shaping_beta=shaping_beta, **TRAINING_ENV)
    trainer = PPOTrainer(_fresh_mat(), envs, ppo)
    trainer.update(trainer.collect())
    collecting = updating = 0.0
    for _ in range(updates):
        start = time.perf_counter()
        rollout = trainer.collect()
        middle = time.perf_counter()
        trainer.update(rollout)
        collecting += middle - start
        updating += time.perf_counter() - middle
    steps = updates * ppo.envs * ppo.rollout
    return Throughput(steps / collecting, steps / (collecting + updating), steps)


def held_throughput(
    predictor: Predictor | None, held: HeldPPOConfig, updates: int = 2, shaping_beta: float = 1.0
) -> Throughput:
    """Time ``updates`` iterations of PPO over held decisions (`HeldPPOTrainer`), fresh MAT.

    One untimed update first, as for `training_throughput`; each timed one plays new seeds.
    """
    env = {**TRAINING_ENV, "shaping_beta": shaping_beta}
    trainer = HeldPPOTrainer(_fresh_mat(), predictor, held, env, seeds.RL)
    trainer.iterate()
    collecting = updating = 0.0
    steps = 0
    for _ in range(updates):
        start = time.perf_counter()
        batch, played = trainer.collect()
        middle = time.perf_counter()
        ppo_epochs(trainer.model, trainer.optimizer, batch, held, trainer.generator)
        trainer.updates += 1  # the next collect plays the next seeds
        collecting += middle - start
        updating += time.perf_counter() - middle
        steps += played.env_steps
    return Throughput(steps / collecting, steps / (collecting + updating), steps)


def _fresh_mat() -> MAT:
    """The same untrained MAT for every setup (seed 0), leaving the global generator alone."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return MAT(MATConfig())


def cartpole_steps_per_second(steps: int) -> float:
    """Random-action steps per second of Gymnasium's ``CartPole-v1``: the machine's yardstick.

    Speed targets are ratios to it, measured in the same run, so they compare across machines.
    """
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)
