"""What PPO learns from: advantages by GAE, and running statistics of the value targets.

`gae` tells the two ways an episode ends apart (Gymnasium's terminated / truncated): a terminated
episode has nothing after its last step, so its last reward is not followed by a value; a
truncated one was only cut, so it bootstraps from the value of the state it was cut in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Advantages", "ValueNorm", "gae"]


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


@dataclass(frozen=True)
class Advantages:
    """What `gae` returns, (T, E, M) each."""

    advantages: torch.Tensor
    returns: torch.Tensor  # advantages + values: the value targets


def gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    final_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> Advantages:
    """Generalised advantage estimates per node, bootstrapping through truncation only.

    An episode that terminates at step t contributes no value of a next state; one that is
    truncated at step t bootstraps from the value of the state it was cut in (``final_values``),
    not from the first state of the next episode (``values[t + 1]``). Neither carries advantage
    across the episode boundary.

    Args:
        rewards: (T, E) team rewards.
        values: (T + 1, E, M) values of the states acted in, the last row for bootstrapping.
        terminated: (T, E) bool, whether the episode reached its end state at step t.
        truncated: (T, E) bool, whether the episode was cut after step t.
        final_values: (T, E, M) values of the states episodes were truncated in (read only where
            ``truncated``).
        gamma: discount.
        lam: GAE's λ, the bias–variance trade-off of the advantage.
    """
    steps = rewards.shape[0]
    advantages = torch.zeros_like(values[:-1])
    running = torch.zeros_like(values[0])
    for t in reversed(range(steps)):
        next_values = torch.where(truncated[t][:, None], final_values[t], values[t + 1])  # (E, M)
        bootstrap = (1.0 - terminated[t].float())[:, None]  # (E, 1)
        carry = (1.0 - (terminated[t] | truncated[t]).float())[:, None]  # (E, 1)
        delta = rewards[t][:, None] + gamma * bootstrap * next_values - values[t]
        running = delta + gamma * lam * carry * running
        advantages[t] = running
    return Advantages(advantages, advantages + values[:-1])
