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
from mara_agents.training.vec_env import VecCoreEnv, VecObservation, VecStep

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
    "VecCoreEnv",
    "VecObservation",
    "VecStep",
    "demonstrations",
    "gae",
    "imitate",
    "train_mara",
    "warm_start",
]
