"""How large the log-progress shaping term is per held decision, beside the completions.

The measurement behind studies/learnability/REPORT.md, *On the event form, with four times as
many updates* (why shaping does not help): a scheduler plays episodes in
the event form with β = 1, and each decision's reward is split into its completions and its
shaping term β·(Φ' − Φ). What a learner's advantage sees of each is the λ-weighted sum over the
decisions that follow (GAE with γ = 1), so both are compared there too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from coreenv import Decisions, EnvConfig, make_config
from coreenv_lab.training.observed import play_decisions
from mara_agents.schedulers.base import Scheduler

__all__ = ["DecisionRewards", "ShapingScale", "decision_rewards", "lambda_sums", "shaping_scale"]


@dataclass(frozen=True)
class DecisionRewards:
    """One episode's rewards per decision, split in two (each array one entry per decision)."""

    successes: np.ndarray
    """Completions collected while the decision was held."""
    shaping: np.ndarray
    """The shaping term collected meanwhile, at β = 1."""


@dataclass(frozen=True)
class ShapingScale:
    """The two parts of the reward per decision and in λ-sums, pooled over episodes."""

    decisions: float
    """Decisions per episode."""
    successes_std: float
    shaping_std: float
    successes_lambda_std: float
    """Standard deviation of ``lambda_sums`` of the completions."""
    shaping_lambda_std: float
    lambda_correlation: float
    """Correlation of the two λ-sums over decisions."""
    shaping_per_episode: float
    """Mean of the shaping term summed over an episode (what is left after telescoping)."""
    successes_per_episode: float


def decision_rewards(
    scheduler: Scheduler, config: EnvConfig, seed: int, decisions: Decisions
) -> DecisionRewards:
    """Play one episode with ``scheduler`` deciding at ``decisions``; split each reward."""
    successes, shaping = [], []
    shaped = make_config(config, shaping_beta=1.0)
    for decision in play_decisions(scheduler, shaped, seed, decisions):
        info = next(iter(decision.infos.values()))
        successes.append(info["successes"])
        shaping.append(next(iter(decision.rewards.values())) - info["successes"])
    return DecisionRewards(np.array(successes, float), np.array(shaping))


def lambda_sums(rewards: np.ndarray, lam: float) -> np.ndarray:
    """``y_t = r_t + λ·y_{t+1}``: what GAE with γ = 1 credits a decision with of ``rewards``."""
    sums = np.empty_like(rewards, dtype=float)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + lam * running
        sums[t] = running
    return sums


def shaping_scale(episodes: Sequence[DecisionRewards], lam: float) -> ShapingScale:
    """The summary of ``episodes``' split rewards (``lam``: GAE's λ)."""
    if not episodes:
        raise ValueError("shaping_scale needs at least one episode.")
    s = np.concatenate([e.successes for e in episodes])
    f = np.concatenate([e.shaping for e in episodes])
    ls = np.concatenate([lambda_sums(e.successes, lam) for e in episodes])
    lf = np.concatenate([lambda_sums(e.shaping, lam) for e in episodes])
    return ShapingScale(
        decisions=len(s) / len(episodes),
        successes_std=float(s.std()),
        shaping_std=float(f.std()),
        successes_lambda_std=float(ls.std()),
        shaping_lambda_std=float(lf.std()),
        lambda_correlation=float(np.corrcoef(ls, lf)[0, 1]),
        shaping_per_episode=float(np.mean([e.shaping.sum() for e in episodes])),
        successes_per_episode=float(np.mean([e.successes.sum() for e in episodes])),
    )
