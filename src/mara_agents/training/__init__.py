"""Training the MAT allocator: imitation, the grouped policy gradient, PPO, and MARA's recipe."""

from mara_agents.training.grouped import GroupedConfig, GroupedTrainer
from mara_agents.training.held_ppo import HeldPPOConfig, HeldPPOTrainer
from mara_agents.training.imitation import (
    Demonstrations,
    ImitationConfig,
    demonstrations,
    imitate,
    warm_start,
)
from mara_agents.training.lanes import SeedCounter, occupied, rollout_lanes
from mara_agents.training.ppo import PPOConfig, PPOTrainer, Rollout
from mara_agents.training.recipe import (
    MARA_PPO,
    MARA_SCRATCH,
    TRAINING_ENV,
    MARARun,
    MARATrainConfig,
    train_mara,
)
from mara_agents.training.returns import Advantages, ValueNorm, gae

__all__ = [
    "MARA_PPO",
    "MARA_SCRATCH",
    "TRAINING_ENV",
    "Advantages",
    "Demonstrations",
    "GroupedConfig",
    "GroupedTrainer",
    "HeldPPOConfig",
    "HeldPPOTrainer",
    "ImitationConfig",
    "MARARun",
    "MARATrainConfig",
    "PPOConfig",
    "PPOTrainer",
    "Rollout",
    "ValueNorm",
    "SeedCounter",
    "demonstrations",
    "gae",
    "imitate",
    "occupied",
    "rollout_lanes",
    "train_mara",
    "warm_start",
]
