"""PPO for the MAT allocator: vectorised rollouts, GAE, clipped objective, value normalisation.

Follows MAT's trainer (design §4): one team reward copied to every node, per-node values and
advantages, advantages normalised over the batch, clipped value loss on normalised targets, one
Adam optimiser. Training reward is the environment's shaped reward (``shaping_beta`` of the
environment) with γ = 1 by default, so the shaped return still counts completions (design §2).
Advantages and value statistics are in `mara_agents.training.returns`.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np
import torch

from coreenv import BatchedCore
from mara_agents.checks import require
from mara_agents.policy.mat import MAT
from mara_agents.training.lanes import occupied
from mara_agents.training.returns import ValueNorm, gae
from mara_agents.training.settings import MATSettings

__all__ = ["PPOBatch", "PPOConfig", "PPOTrainer", "Rollout", "ppo_epochs"]


@dataclass(frozen=True)
class PPOConfig(MATSettings):
    """PPO settings (`MATSettings`): generic PPO defaults, MAT's where they apply.

    The defaults are discussed in docs/mara.md. The recipe the shipped MARA checkpoints
    trained with is `mara_agents.training.MARA_PPO`.
    """

    envs: int = 32
    """E: environments stepped together."""
    rollout: int = 128
    """T: steps per environment between updates (an update learns from E × T steps)."""
    gamma: float = 1.0
    """γ, the discount (1: the shaped return still counts completions, design §2)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 1", ("envs", "rollout"))
        if (self.envs * self.rollout) % self.minibatches:
            raise ValueError(
                f"PPOConfig: envs × rollout ({self.envs * self.rollout}) must divide into "
                f"{self.minibatches} minibatches."
            )
        require(self, "in (0, 1]", ("gamma",))


@dataclass
class Rollout:
    """One rollout, (T, E, …) tensors."""

    obs: torch.Tensor  # (T, E, M, D)
    masks: torch.Tensor  # (T, E, M, K + 1) bool, as used when sampling
    actions: torch.Tensor  # (T, E, M)
    log_probs: torch.Tensor  # (T, E, M)
    values: torch.Tensor  # (T + 1, E, M) on the reward scale
    rewards: torch.Tensor  # (T, E)
    terminated: torch.Tensor  # (T, E) bool
    truncated: torch.Tensor  # (T, E) bool
    final_values: torch.Tensor  # (T, E, M) on the reward scale, where truncated (else 0)


@dataclass(frozen=True)
class PPOBatch:
    """What PPO's epochs learn from, flattened to (N, …) rows (one row per decision)."""

    obs: torch.Tensor  # (N, M, D)
    masks: torch.Tensor  # (N, M, K + 1) bool, as sampled under
    actions: torch.Tensor  # (N, M)
    log_probs: torch.Tensor  # (N, M) when sampled
    values: torch.Tensor  # (N, M) when sampled, normalised
    targets: torch.Tensor  # (N, M) value targets, normalised
    advantages: torch.Tensor  # (N, M) normalised


def ppo_epochs(
    model: MAT,
    optimizer: torch.optim.Optimizer,
    batch: PPOBatch,
    config: MATSettings,
    generator: torch.Generator,
    train_policy: bool = True,
) -> dict[str, float]:
    """``config.epochs`` passes of ``config.minibatches`` clipped PPO steps; mean statistics.

    The loss is the clipped policy objective, the value loss clipped around the sampled values
    (both on normalised targets), and the entropy bonus; with ``train_policy=False`` only the
    value loss (and only ``optimizer``'s parameters move).
    """
    c = config
    n = batch.obs.shape[0]
    size = -(-n // c.minibatches)
    stats = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "clipped": 0.0}
    passes = 0
    for _ in range(c.epochs):
        order = torch.randperm(n, generator=generator, device=batch.obs.device)
        for start in range(0, n, size):
            rows = order[start : start + size]
            scores = model.score_actions(batch.obs[rows], batch.actions[rows], batch.masks[rows])
            entropy, values = scores.entropy, scores.values
            ratio = torch.exp(scores.log_probs - batch.log_probs[rows])
            advantages, targets = batch.advantages[rows], batch.targets[rows]
            old = batch.values[rows]
            policy_loss = -torch.min(
                ratio * advantages, ratio.clamp(1 - c.clip, 1 + c.clip) * advantages
            ).mean()
            clipped = old + (values - old).clamp(-c.value_clip, c.value_clip)
            value_loss = torch.max((values - targets) ** 2, (clipped - targets) ** 2).mean()
            loss = c.value_coef * value_loss
            if train_policy:
                loss = loss + policy_loss - c.entropy * entropy.mean()
            model.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), c.max_grad_norm)
            optimizer.step()
            stats["policy"] += policy_loss.item()
            stats["value"] += value_loss.item()
            stats["entropy"] += entropy.mean().item()
            stats["clipped"] += ((ratio - 1).abs() > c.clip).float().mean().item()
            passes += 1
    return {key: value / passes for key, value in stats.items()}


class PPOTrainer:
    """Collects rollouts from `rollout_lanes` with a `MAT` and improves it by PPO.

    The first ``critic_warmup`` updates of `iterate` train only the value head.
    ``state_dict`` captures everything (network, optimiser, value statistics, sampling generator,
    and the environments mid-episode), so training resumed from it continues bit for bit.
    """

    def __init__(
        self,
        model: MAT,
        envs: BatchedCore,
        config: PPOConfig,
        device: str = "cpu",
        critic_warmup: int = 0,
    ) -> None:
        self.model = model.to(device)
        self.critic_warmup = critic_warmup
        self.envs = envs
        self.config = config
        self.device = device
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, eps=1e-5)
        self.critic_optimizer = torch.optim.Adam(
            model.encoder.value.parameters(), lr=config.lr, eps=1e-5
        )
        self.value_norm = ValueNorm()
        self.generator = torch.Generator(device=device).manual_seed(config.seed)
        shown = envs.view()  # what the started lanes show
        self.obs, self.occupied = shown.obs, occupied(shown.action_mask)
        self.finished: list[dict] = []  # metrics of the episodes ended since the last update
        self.updates = 0
        self.env_steps = 0

    def collect(self) -> Rollout:
        """Play ``rollout`` steps in every environment with the current policy."""
        c, d = self.config, self.device
        obs, masks, actions, log_probs, values, rewards = [], [], [], [], [], []
        terminated, truncated, final_values = [], [], []
        for _ in range(c.rollout):
            obs_t = torch.from_numpy(self.obs).to(d)
            out = self.model.act(
                obs_t, torch.from_numpy(self.occupied).to(d), generator=self.generator
            )
            step = self.envs.step(out.actions.cpu().numpy())
            self.obs, self.occupied = step.obs, occupied(step.action_mask)
            self.finished += [metrics for _, _, metrics in step.finished]
            obs.append(obs_t)
            masks.append(out.masks)
            actions.append(out.actions)
            log_probs.append(out.log_probs)
            values.append(self.value_norm.denormalize(out.values))
            rewards.append(torch.from_numpy(step.rewards.astype(np.float32)).to(d))
            terminated.append(torch.from_numpy(step.terminated).to(d))
            truncated.append(torch.from_numpy(step.truncated).to(d))
            final = torch.zeros_like(out.values)
            if step.truncated.any():  # never at default settings (no episode reaches max_steps)
                with torch.no_grad():
                    final = self.model.values(torch.from_numpy(step.final_obs).to(d))
                final = self.value_norm.denormalize(final)
            final_values.append(final)
        with torch.no_grad():
            last = self.model.values(torch.from_numpy(self.obs).to(d))
        values.append(self.value_norm.denormalize(last))
        self.env_steps += c.rollout * self.envs.num_envs
        return Rollout(
            obs=torch.stack(obs),
            masks=torch.stack(masks),
            actions=torch.stack(actions),
            log_probs=torch.stack(log_probs),
            values=torch.stack(values),
            rewards=torch.stack(rewards),
            terminated=torch.stack(terminated),
            truncated=torch.stack(truncated),
            final_values=torch.stack(final_values),
        )

    def update(self, rollout: Rollout, train_policy: bool = True) -> dict[str, float]:
        """PPO epochs over the rollout; returns mean losses and statistics.

        With ``train_policy=False`` only the value head learns (a critic warm-up: a policy
        initialised by imitation is moved neither by the advantages of an untrained critic nor by
        value gradients through the shared encoder).
        """
        c = self.config
        optimizer = self.optimizer if train_policy else self.critic_optimizer
        estimate = gae(
            rollout.rewards,
            rollout.values,
            rollout.terminated,
            rollout.truncated,
            rollout.final_values,
            c.gamma,
            c.gae_lambda,
        )
        advantages, returns = estimate.advantages, estimate.returns
        self.value_norm.update(returns)
        flat = lambda x: x.reshape(-1, *x.shape[2:])  # noqa: E731  (T, E, …) -> (T·E, …)
        advantages = flat(advantages)
        batch = PPOBatch(
            flat(rollout.obs),
            flat(rollout.masks),
            flat(rollout.actions),
            flat(rollout.log_probs),
            flat(self.value_norm.normalize(rollout.values[:-1])),
            flat(self.value_norm.normalize(returns)),
            (advantages - advantages.mean()) / (advantages.std() + 1e-8),
        )
        stats = ppo_epochs(self.model, optimizer, batch, c, self.generator, train_policy)
        self.updates += 1
        return stats

    def iterate(self) -> dict[str, float]:
        """One update (value head only in the critic warm-up); its statistics and ``completion``.

        ``completion``: the mean completion rate of the episodes its rollout ended (NaN if none).
        """
        stats = self.update(self.collect(), train_policy=self.updates >= self.critic_warmup)
        finished = [m["completion_rate"] for m in self.finished]
        self.finished = []
        stats["completion"] = float(np.mean(finished)) if finished else float("nan")
        return stats

    def state_dict(self) -> dict:
        """Everything needed to continue exactly (the environments' predictor is not included)."""
        predictor, self.envs.predictor = self.envs.predictor, None
        try:
            envs = pickle.dumps((self.envs, self.obs, self.occupied, self.finished))
        finally:
            self.envs.predictor = predictor
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
        predictor = self.envs.predictor
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.critic_optimizer.load_state_dict(state["critic_optimizer"])
        vars(self.value_norm).update(state["value_norm"])
        self.generator.set_state(state["generator"])
        self.updates, self.env_steps = state["updates"], state["env_steps"]
        self.envs, self.obs, self.occupied, self.finished = pickle.loads(state["envs"])
        self.envs.predictor = predictor
