"""Training the MAT allocator: vectorised environments and PPO."""

from mara_agents.training.ppo import PPOConfig, PPOTrainer, Rollout, ValueNorm, gae
from mara_agents.training.vec_env import VecCoreEnv

__all__ = ["PPOConfig", "PPOTrainer", "Rollout", "ValueNorm", "VecCoreEnv", "gae"]
