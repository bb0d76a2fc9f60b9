"""Reinforcement-learning baselines trained from scratch on the vector forms of the environment."""

from mara_agents.baselines.sb3_env import SB3VecEnv

__all__ = ["SB3VecEnv"]
