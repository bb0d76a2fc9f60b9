"""Grouped policy gradient for the MAT: whole episodes, held decisions, leave-one-out baselines.

The recipe answers what made PPO fail on CoRE-Learning (studies/learnability/REPORT.md,
*Why PPO did not learn*):

- **The workload dominates the return.** Each update plays ``workloads`` episode seeds
  ``group`` times each. A decision's advantage is its lane's return-to-go at that step minus the
  mean return-to-go *at the same step* of the other lanes of the same seed (a leave-one-out,
  input-dependent baseline: Mao et al., ICLR 2019), so the arrivals, curves and deadlines that
  every lane of a seed shares cancel out.
- **One step's action almost never matters.** Decisions are held between events
  (`coreenv.core.events.DecisionEvents`), so each sampled decision is one the outcome can
  notice; only decision steps enter the gradient.
- **The critic cannot see it.** No critic: Monte-Carlo returns with γ = 1 over whole episodes.
- **Small steps from a good start.** PPO's clipped ratio on each node's action, and a KL anchor
  ``anchor · KL(π ‖ π₀)`` to the policy the run started from (the imitation policy).

Rewards are the environment's (``shaping_beta`` of the environment: potential shaping on or off).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from coreenv import BatchedCore, Predictor, make_config
from mara_agents.checks import require
from mara_agents.policy.mat import MAT
from mara_agents.training.episodes import play_episodes
from mara_agents.training.settings import ClippedSettings

__all__ = ["Decisions", "GroupedConfig", "GroupedTrainer", "leave_one_out"]


@dataclass(frozen=True)
class GroupedConfig(ClippedSettings):
    """Settings of `GroupedTrainer` (`ClippedSettings`: no critic, so no value loss or GAE)."""

    workloads: int = 16
    """Distinct episode seeds per update."""
    group: int = 4
    """Rollouts of each seed per update (>= 2: the baseline is the others' mean)."""
    hold: int = 8
    """The most steps a decision is held (1: a decision every step)."""
    feasibility: bool = False
    """Also decide again when a task's estimated P(success) crosses 0.5."""
    lr: float = 1e-4
    """Adam's learning rate."""
    anchor: float = 0.05
    """Weight of KL(π ‖ π₀) to the starting policy, per node and decision."""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self, ">= 1", ("workloads", "hold"))
        require(self, ">= 2", ("group",))
        require(self, ">= 0", ("anchor",))


@dataclass(frozen=True)
class Decisions:
    """The decision steps of one update's episodes, with their advantages."""

    obs: torch.Tensor  # (N, M, D)
    masks: torch.Tensor  # (N, M, K + 1) bool, as sampled under
    actions: torch.Tensor  # (N, M)
    log_probs: torch.Tensor  # (N, M) when sampled
    advantages: torch.Tensor  # (N,)
    completion: np.ndarray  # (workloads, group) completion rate of each episode


def leave_one_out(returns_to_go: np.ndarray, group: int) -> np.ndarray:
    """(T, B) returns-to-go minus the mean of the same step's other lanes of the same seed.

    Lanes ``g·group … (g + 1)·group − 1`` play the same seed; a lane that has ended has 0 to go.
    """
    steps, lanes = returns_to_go.shape
    grouped = returns_to_go.reshape(steps, lanes // group, group)
    others = (grouped.sum(axis=2, keepdims=True) - grouped) / (group - 1)
    return (grouped - others).reshape(steps, lanes)


class GroupedTrainer:
    """Improves a `MAT` by the grouped policy gradient of the module docstring.

    Args:
        model: the policy (trained in place); the anchor π₀ is a frozen copy of it as given.
        predictor: fills the observation's estimates (shared; its cache is reused).
        config: `GroupedConfig`.
        envs: `EnvConfig` fields of the episodes (the training regime and its shaping), one
            mapping per cluster trained on: update u plays the cluster ``u mod len(envs)``.
        env_seed: update u plays seeds ``env_seed + u·workloads + w``, w < workloads.
        device: where the network runs.

    ``state_dict`` holds everything (network, anchor, optimiser, sampling generator, counters);
    an update depends only on it, so a resumed run continues bit for bit.
    """

    def __init__(
        self,
        model: MAT,
        predictor: Predictor | None,
        config: GroupedConfig,
        envs: Sequence[Mapping[str, Any]],
        env_seed: int,
        device: str = "cpu",
    ) -> None:
        if not envs:
            raise ValueError("GroupedTrainer needs at least one cluster's EnvConfig fields.")
        self.model = model.to(device)
        self.anchor = copy.deepcopy(model).eval().requires_grad_(False)
        self.config = config
        self.device = device
        lanes = config.workloads * config.group
        self.cores = [BatchedCore(make_config(None, **env), lanes, predictor) for env in envs]
        self.env_seed = env_seed
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, eps=1e-5)
        self.generator = torch.Generator(device=device).manual_seed(config.seed)
        self.updates = 0
        self.env_steps = 0

    def seeds(self) -> list[int]:
        """The lane seeds of the next update: each workload seed ``group`` times in a row."""
        c = self.config
        first = self.env_seed + self.updates * c.workloads
        return [first + w for w in range(c.workloads) for _ in range(c.group)]

    def collect(self) -> Decisions:
        """Play every lane's whole episode with the sampled policy, deciding at events only."""
        c = self.config
        core = self.cores[self.updates % len(self.cores)]
        played = play_episodes(
            core, self.model, self.seeds(), c.hold, c.feasibility, self.generator, self.device
        )
        self.env_steps += played.env_steps
        advantage = leave_one_out(played.returns_to_go, c.group)
        return Decisions(
            played.obs,
            played.masks,
            played.actions,
            played.log_probs,
            torch.from_numpy(advantage[played.steps, played.lanes].astype(np.float32)).to(
                self.device
            ),
            played.completion.reshape(c.workloads, c.group),
        )

    def update(self, batch: Decisions) -> dict[str, float]:
        """Clipped policy-gradient epochs over the decisions, with the KL anchor."""
        c = self.config
        advantages = batch.advantages / (batch.advantages.std() + 1e-8)
        with torch.no_grad():
            reference = self.anchor.log_policy(batch.obs, batch.actions, batch.masks)[0]
        n = len(advantages)
        size = -(-n // c.minibatches)
        stats = {"policy": 0.0, "kl": 0.0, "entropy": 0.0, "clipped": 0.0}
        passes = 0
        for _ in range(c.epochs):
            order = torch.randperm(n, generator=self.generator, device=self.device)
            for start in range(0, n, size):
                rows = order[start : start + size]
                log_policy, _ = self.model.log_policy(
                    batch.obs[rows], batch.actions[rows], batch.masks[rows]
                )
                log_probs = log_policy.gather(-1, batch.actions[rows, :, None]).squeeze(-1)
                ratio = torch.exp(log_probs - batch.log_probs[rows])  # (n, M)
                advantage = advantages[rows, None]
                policy_loss = -torch.min(
                    ratio * advantage, ratio.clamp(1 - c.clip, 1 + c.clip) * advantage
                ).mean()
                probs = log_policy.exp()
                kl = (probs * (log_policy - reference[rows])).sum(-1).mean()
                loss = policy_loss + c.anchor * kl
                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), c.max_grad_norm)
                self.optimizer.step()
                stats["policy"] += policy_loss.item()
                stats["kl"] += kl.item()
                stats["entropy"] += -(probs * log_policy).sum(-1).mean().item()
                stats["clipped"] += ((ratio - 1).abs() > c.clip).float().mean().item()
                passes += 1
        self.updates += 1
        return {key: value / passes for key, value in stats.items()}

    def iterate(self) -> dict[str, float]:
        """One update: collect, then learn; its statistics and the episodes' completion."""
        batch = self.collect()
        stats = self.update(batch)
        stats["completion"] = float(batch.completion.mean())
        stats["spread"] = float(batch.completion.std(axis=1, ddof=1).mean())
        stats["decisions"] = float(len(batch.advantages))
        return stats

    def state_dict(self) -> dict:
        """Everything needed to continue exactly (not the predictor)."""
        return {
            "model": self.model.state_dict(),
            "anchor": self.anchor.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "generator": self.generator.get_state(),
            "updates": self.updates,
            "env_steps": self.env_steps,
        }

    def load_state_dict(self, state: dict) -> None:
        """Continue from `state_dict`."""
        self.model.load_state_dict(state["model"])
        self.anchor.load_state_dict(state["anchor"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self.updates, self.env_steps = state["updates"], state["env_steps"]
