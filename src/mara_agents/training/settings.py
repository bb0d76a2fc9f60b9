"""The settings every PPO-family trainer of the package reads, declared and checked in one place.

Each trainer's config derives from one of these and adds only what is its own; where its default
differs (MAT's learning rate, CleanRL's, SB3's), it states the field again with that default, and
the meaning and the check stay here (as CleanRL keeps its arguments in one place).
"""

from __future__ import annotations

from dataclasses import dataclass

from mara_agents.checks import require

__all__ = ["ActorCriticSettings", "ClippedSettings", "MATSettings"]


@dataclass(frozen=True)
class ClippedSettings:
    """Clipped policy updates: passes, minibatches, the ratio's clip, the optimiser, the seed."""

    epochs: int = 4
    """Passes over each update's data."""
    minibatches: int = 4
    """Minibatches per pass."""
    lr: float = 3e-4
    """Adam's learning rate."""
    clip: float = 0.2
    """ε of the clipped objective: ratios outside [1 − ε, 1 + ε] get no gradient."""
    max_grad_norm: float = 0.5
    """Gradients are rescaled to at most this norm."""
    seed: int = 0
    """Seeds the initial weights where the trainer makes them, the sampling and the minibatches."""

    def __post_init__(self) -> None:
        require(self, ">= 1", ("epochs", "minibatches"))
        require(self, "> 0", ("lr", "clip", "max_grad_norm"))
        require(self, ">= 0", ("seed",))


@dataclass(frozen=True)
class ActorCriticSettings(ClippedSettings):
    """`ClippedSettings` with a critic: the entropy bonus, the value loss and GAE."""

    entropy: float = 0.01
    """Weight of the entropy bonus."""
    value_coef: float = 0.5
    """Weight of the value loss."""
    gae_lambda: float = 0.95
    """GAE's λ, the bias–variance trade-off of the advantage."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 0", ("entropy", "value_coef"))
        require(self, "in [0, 1]", ("gae_lambda",))


@dataclass(frozen=True)
class MATSettings(ActorCriticSettings):
    """`ActorCriticSettings` of the MAT trainers: MAT's defaults and a clipped value loss.

    `mara_agents.training.ppo.ppo_epochs` reads these, for both of MAT's PPO trainers.
    """

    lr: float = 5e-4
    """Adam's learning rate (MAT's)."""
    value_clip: float = 0.2
    """Clip of the value update around the values sampled with, on normalised targets."""
    value_coef: float = 1.0
    """Weight of the value loss (MAT's)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, "> 0", ("value_clip",))
