"""PPO over held decisions: the paper's MAT + PPO recipe, fast enough to train from scratch.

MAT's trainer (MAPPO-style; design §4): one team reward copied to every node, per-node values,
GAE, advantages normalised over the batch, a value loss clipped around the sampled values on
targets normalised by running statistics, an entropy bonus, one Adam optimiser. Two departures,
both for speed and credit (studies/learnability/REPORT.md, *Learning from
scratch*):

- **Whole episodes.** Each update plays ``episodes`` distinct seeds from their first step to their
  end (`play_episodes`), so every batch covers every phase of an episode and no episode is cut.
- **Held decisions.** A lane decides anew only at events (`DecisionEvents`); between them it
  repeats its joint action. The process is semi-Markov over decisions: a decision's reward is the
  sum of the rewards it collected while held (γ = 1), and GAE's λ runs over decisions, not steps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from coreenv import BatchedCore, Predictor, make_config
from mara_agents.checks import require
from mara_agents.policy.mat import MAT
from mara_agents.training.episodes import PlayedEpisodes, play_episodes, segment_rewards
from mara_agents.training.ppo import PPOBatch, ppo_epochs
from mara_agents.training.returns import ValueNorm, gae
from mara_agents.training.settings import MATSettings

__all__ = ["HeldPPOConfig", "HeldPPOTrainer", "decision_advantages"]


@dataclass(frozen=True)
class HeldPPOConfig(MATSettings):
    """Settings of `HeldPPOTrainer` (`MATSettings`: MAT's published ones where they apply).

    γ is 1: each decision's reward is the sum of the steps it was held.
    """

    episodes: int = 128
    """Whole episodes per update, each with its own seed (≈ 160,000 steps at p = 0.04)."""
    hold: int = 8
    """The most steps a decision is held (1: a decision every step)."""
    feasibility: bool = False
    """Also decide again when a task's estimated P(success) crosses 0.5."""
    minibatches: int = 16
    """Minibatches per pass (≈ 1,700 decisions each at p = 0.04)."""
    anneal: int = 0
    """Environment steps over which the learning rate and the entropy weight fall linearly to 0,
    so a run keeps what it learned (0: both constant, MAT's)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 1", ("episodes", "hold"))
        require(self, ">= 0", ("anneal",))


def decision_advantages(
    played: PlayedEpisodes, values: torch.Tensor, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, M) GAE advantages and value targets of each decision, over its lane's decisions.

    ``values`` (N, M) are on the reward scale. A lane's last decision ends its episode, so nothing
    is bootstrapped after it (`HeldPPOTrainer` refuses an `EnvConfig.max_steps` that cuts one).
    """
    lanes = played.lanes
    counts = np.bincount(lanes)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    order = np.argsort(lanes, kind="stable")  # each lane's decisions stay in step order
    position = np.empty(len(lanes), np.int64)
    position[order] = np.arange(len(lanes)) - first[lanes[order]]
    depth, width, nodes = counts.max(), len(counts), values.shape[1]
    rewards = torch.zeros(depth, width, dtype=values.dtype)
    rewards[position, lanes] = torch.from_numpy(segment_rewards(played)).to(values.dtype)
    padded = torch.zeros(depth + 1, width, nodes, dtype=values.dtype)
    padded[position, lanes] = values.cpu()
    terminated = torch.ones(depth, width, dtype=torch.bool)  # padding ends too: nothing leaks
    terminated[position, lanes] = torch.from_numpy(position == counts[lanes] - 1)
    never = torch.zeros(depth, width, dtype=torch.bool)
    estimate = gae(rewards, padded, terminated, never, torch.zeros_like(padded[:-1]), 1.0, lam)
    rows = (position, lanes)
    device = values.device
    return estimate.advantages[rows].to(device), estimate.returns[rows].to(device)


class HeldPPOTrainer:
    """Improves a `MAT` by PPO over whole episodes and held decisions (module docstring).

    Args:
        model: the policy and critic (trained in place).
        predictor: fills the observation's estimates (shared; its cache is reused).
        config: `HeldPPOConfig`.
        env_overrides: `EnvConfig` fields of every episode (the training regime and its shaping).
        env_seed: update u plays seeds ``env_seed + u·episodes + e``, e < episodes.
        device: where the network runs.

    ``state_dict`` holds everything (network, optimiser, value statistics, sampling generator,
    counters); an update depends only on it, so a resumed run continues bit for bit.
    """

    def __init__(
        self,
        model: MAT,
        predictor: Predictor | None,
        config: HeldPPOConfig,
        env_overrides: Mapping[str, Any],
        env_seed: int,
        device: str = "cpu",
    ) -> None:
        self.model = model.to(device)
        self.config = config
        self.device = device
        self.env_config = make_config(None, **env_overrides)
        if self.env_config.max_steps is not None:
            raise ValueError(
                f"HeldPPOTrainer plays whole episodes; EnvConfig.max_steps "
                f"{self.env_config.max_steps} would cut some, and a cut episode has no value "
                "to bootstrap from here. Leave it None (a bound no episode reaches)."
            )
        self.core = BatchedCore(self.env_config, config.episodes, predictor)
        self.env_seed = env_seed
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, eps=1e-5)
        self.value_norm = ValueNorm()
        self.generator = torch.Generator(device=device).manual_seed(config.seed)
        self.updates = 0
        self.env_steps = 0

    def seeds(self) -> list[int]:
        """The episode seeds of the next update."""
        first = self.env_seed + self.updates * self.config.episodes
        return list(range(first, first + self.config.episodes))

    def collect(self) -> tuple[PPOBatch, PlayedEpisodes]:
        """Play the update's episodes; the batch PPO learns from, and what was played."""
        c = self.config
        played = play_episodes(
            self.core, self.model, self.seeds(), c.hold, c.feasibility, self.generator, self.device
        )
        self.env_steps += played.env_steps
        values = self.value_norm.denormalize(played.values)
        advantages, returns = decision_advantages(played, values, c.gae_lambda)
        self.value_norm.update(returns)
        batch = PPOBatch(
            played.obs,
            played.masks,
            played.actions,
            played.log_probs,
            self.value_norm.normalize(values),
            self.value_norm.normalize(returns),
            (advantages - advantages.mean()) / (advantages.std() + 1e-8),
        )
        return batch, played

    def schedule(self) -> float:
        """The fraction of the learning rate and entropy weight the next update uses."""
        if self.config.anneal == 0:
            return 1.0
        return max(0.0, 1.0 - self.env_steps / self.config.anneal)

    def iterate(self) -> dict[str, float]:
        """One update: collect, then learn; its statistics and the episodes' completion."""
        fraction = self.schedule()
        for group in self.optimizer.param_groups:
            group["lr"] = self.config.lr * fraction
        settings = dataclasses.replace(self.config, entropy=self.config.entropy * fraction)
        batch, played = self.collect()
        stats = ppo_epochs(self.model, self.optimizer, batch, settings, self.generator)
        self.updates += 1
        stats["schedule"] = fraction
        stats["completion"] = float(played.completion.mean())
        stats["decisions"] = float(len(played.steps))
        return stats

    def state_dict(self) -> dict:
        """Everything needed to continue exactly (not the predictor)."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "value_norm": vars(self.value_norm).copy(),
            "generator": self.generator.get_state(),
            "updates": self.updates,
            "env_steps": self.env_steps,
        }

    def load_state_dict(self, state: dict) -> None:
        """Continue from `state_dict`."""
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        vars(self.value_norm).update(state["value_norm"])
        self.generator.set_state(state["generator"])
        self.updates, self.env_steps = state["updates"], state["env_steps"]
