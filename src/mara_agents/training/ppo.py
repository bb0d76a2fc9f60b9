"""PPO for the MAT allocator: vectorised rollouts, GAE, clipped objective, value normalisation.

Follows MAT's trainer (design §4): one team reward copied to every node, per-node values and
advantages, advantages normalised over the batch, clipped value loss on normalised targets, one
Adam optimiser. Training reward is the environment's shaped reward (``shaping_beta`` of the
environment) with γ = 1 by default, so the shaped return still counts completions (design §2).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np
import torch

from mara_agents.policy.mat import MAT
from mara_agents.training.vec_env import VecCoreEnv

__all__ = ["PPOConfig", "PPOTrainer", "Rollout", "ValueNorm", "gae"]


@dataclass(frozen=True)
class PPOConfig:
    """PPO settings (MAT's defaults where they apply; docs/mara.md)."""

    envs: int = 32
    rollout: int = 128
    """Steps per environment between updates."""
    epochs: int = 4
    minibatches: int = 4
    lr: float = 5e-4
    clip: float = 0.2
    value_clip: float = 0.2
    entropy: float = 0.01
    value_coef: float = 1.0
    max_grad_norm: float = 0.5
    gamma: float = 1.0
    gae_lambda: float = 0.95
    seed: int = 0

    def __post_init__(self) -> None:
        if (self.envs * self.rollout) % self.minibatches:
            raise ValueError(
                f"PPOConfig: envs × rollout ({self.envs * self.rollout}) must divide into "
                f"{self.minibatches} minibatches."
            )
        if not 0.0 < self.gamma <= 1.0 or not 0.0 <= self.gae_lambda <= 1.0:
            raise ValueError("PPOConfig needs 0 < gamma <= 1 and 0 <= gae_lambda <= 1.")


class ValueNorm:
    """Running mean and variance of value targets (Welford), to learn values on a unit scale."""

    def __init__(self) -> None:
        self.count, self.mean, self.m2 = 0, 0.0, 0.0

    @property
    def std(self) -> float:
        """Standard deviation so far (1 before any data)."""
        return float(np.sqrt(self.m2 / self.count)) if self.count > 1 else 1.0

    def update(self, values: torch.Tensor) -> None:
        """Fold a batch of targets into the statistics (Chan's parallel update)."""
        batch = values.detach().double().flatten()
        n, mean = batch.numel(), float(batch.mean())
        m2 = float(((batch - mean) ** 2).sum())
        total = self.count + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self.m2 += m2 + delta**2 * self.count * n / total
        self.count = total

    def normalize(self, values: torch.Tensor) -> torch.Tensor:
        """Targets on the unit scale."""
        return (values - self.mean) / self.std

    def denormalize(self, values: torch.Tensor) -> torch.Tensor:
        """Network outputs back on the reward scale."""
        return values * self.std + self.mean


def gae(
    rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates per node.

    Args:
        rewards: (T, E) team rewards.
        values: (T + 1, E, M) values of the states, the last row for bootstrapping.
        dones: (T, E) whether the episode ended at step t (no bootstrapping across it).
        gamma: discount.
        lam: GAE's λ, the bias–variance trade-off of the advantage.

    Returns:
        advantages and returns, (T, E, M) each.
    """
    steps = rewards.shape[0]
    advantages = torch.zeros_like(values[:-1])
    running = torch.zeros_like(values[0])
    for t in reversed(range(steps)):
        alive = (1.0 - dones[t].float())[:, None]  # (E, 1)
        delta = rewards[t][:, None] + gamma * alive * values[t + 1] - values[t]
        running = delta + gamma * lam * alive * running
        advantages[t] = running
    return advantages, advantages + values[:-1]


@dataclass
class Rollout:
    """One rollout, (T, E, …) tensors."""

    obs: torch.Tensor  # (T, E, M, D)
    masks: torch.Tensor  # (T, E, M, K + 1) bool, as used when sampling
    actions: torch.Tensor  # (T, E, M)
    log_probs: torch.Tensor  # (T, E, M)
    values: torch.Tensor  # (T + 1, E, M) on the reward scale
    rewards: torch.Tensor  # (T, E)
    dones: torch.Tensor  # (T, E)


class PPOTrainer:
    """Collects rollouts from a `VecCoreEnv` with a `MAT` and improves it by PPO.

    ``state_dict`` captures everything (network, optimiser, value statistics, sampling generator,
    and the environments mid-episode), so training resumed from it continues bit for bit.
    """

    def __init__(
        self, model: MAT, envs: VecCoreEnv, config: PPOConfig, device: str = "cpu"
    ) -> None:
        self.model = model.to(device)
        self.envs = envs
        self.config = config
        self.device = device
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, eps=1e-5)
        self.critic_optimizer = torch.optim.Adam(
            model.encoder.value.parameters(), lr=config.lr, eps=1e-5
        )
        self.value_norm = ValueNorm()
        self.generator = torch.Generator(device=device).manual_seed(config.seed)
        self.obs, self.occupied = envs.reset()
        self.updates = 0
        self.env_steps = 0

    def collect(self) -> Rollout:
        """Play ``rollout`` steps in every environment with the current policy."""
        c, d = self.config, self.device
        obs, masks, actions, log_probs, values, rewards, dones = [], [], [], [], [], [], []
        for _ in range(c.rollout):
            obs_t = torch.from_numpy(self.obs).to(d)
            out = self.model.act(
                obs_t, torch.from_numpy(self.occupied).to(d), generator=self.generator
            )
            self.obs, self.occupied, reward, done = self.envs.step(out.actions.cpu().numpy())
            obs.append(obs_t)
            masks.append(out.masks)
            actions.append(out.actions)
            log_probs.append(out.log_probs)
            values.append(self.value_norm.denormalize(out.values))
            rewards.append(torch.from_numpy(reward).to(d))
            dones.append(torch.from_numpy(done).to(d))
        with torch.no_grad():
            _, last = self.model.encoder(torch.from_numpy(self.obs).to(d))
        values.append(self.value_norm.denormalize(last))
        self.env_steps += c.rollout * len(self.envs.envs)
        return Rollout(
            torch.stack(obs),
            torch.stack(masks),
            torch.stack(actions),
            torch.stack(log_probs),
            torch.stack(values),
            torch.stack(rewards),
            torch.stack(dones),
        )

    def update(self, rollout: Rollout, train_policy: bool = True) -> dict[str, float]:
        """PPO epochs over the rollout; returns mean losses and statistics.

        With ``train_policy=False`` only the value head learns (a critic warm-up: a policy
        initialised by imitation is moved neither by the advantages of an untrained critic nor by
        value gradients through the shared encoder).
        """
        c = self.config
        optimizer = self.optimizer if train_policy else self.critic_optimizer
        advantages, returns = gae(
            rollout.rewards, rollout.values, rollout.dones, c.gamma, c.gae_lambda
        )
        self.value_norm.update(returns)
        flat = lambda x: x.reshape(-1, *x.shape[2:])  # noqa: E731  (T, E, …) -> (T·E, …)
        obs, masks, actions = flat(rollout.obs), flat(rollout.masks), flat(rollout.actions)
        old_log_probs, old_values = (
            flat(rollout.log_probs),
            flat(self.value_norm.normalize(rollout.values[:-1])),
        )
        targets = flat(self.value_norm.normalize(returns))
        advantages = flat(advantages)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        size = obs.shape[0] // c.minibatches
        stats = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "clipped": 0.0}
        for _ in range(c.epochs):
            order = torch.randperm(obs.shape[0], generator=self.generator, device=self.device)
            for start in range(0, obs.shape[0], size):
                rows = order[start : start + size]
                log_probs, entropy, values = self.model.evaluate(
                    obs[rows], actions[rows], masks[rows]
                )
                ratio = torch.exp(log_probs - old_log_probs[rows])
                policy_loss = -torch.min(
                    ratio * advantages[rows],
                    ratio.clamp(1 - c.clip, 1 + c.clip) * advantages[rows],
                ).mean()
                clipped = old_values[rows] + (values - old_values[rows]).clamp(
                    -c.value_clip, c.value_clip
                )
                value_loss = torch.max(
                    (values - targets[rows]) ** 2, (clipped - targets[rows]) ** 2
                ).mean()
                loss = c.value_coef * value_loss
                if train_policy:
                    loss = loss + policy_loss - c.entropy * entropy.mean()
                self.model.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), c.max_grad_norm)
                optimizer.step()
                stats["policy"] += policy_loss.item()
                stats["value"] += value_loss.item()
                stats["entropy"] += entropy.mean().item()
                stats["clipped"] += ((ratio - 1).abs() > c.clip).float().mean().item()
        self.updates += 1
        steps = c.epochs * c.minibatches
        return {key: value / steps for key, value in stats.items()}

    def state_dict(self) -> dict:
        """Everything needed to continue exactly (the environments' predictor is not included)."""
        predictors = [env.predictor for env in self.envs.envs]
        for env in self.envs.envs:
            env.predictor = None
        try:
            envs = pickle.dumps((self.envs, self.obs, self.occupied))
        finally:
            for env, predictor in zip(self.envs.envs, predictors):
                env.predictor = predictor
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "critic_optimizer": self.critic_optimizer.state_dict(),
            "value_norm": vars(self.value_norm).copy(),
            "generator": self.generator.get_state(),
            "updates": self.updates,
            "env_steps": self.env_steps,
            "envs": envs,
        }

    def load_state_dict(self, state: dict) -> None:
        """Continue from `state_dict`; the current environments' predictor is kept."""
        predictor = self.envs.envs[0].predictor
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.critic_optimizer.load_state_dict(state["critic_optimizer"])
        vars(self.value_norm).update(state["value_norm"])
        self.generator.set_state(state["generator"])
        self.updates, self.env_steps = state["updates"], state["env_steps"]
        self.envs, self.obs, self.occupied = pickle.loads(state["envs"])
        for env in self.envs.envs:
            env.predictor = predictor
