"""Whole episodes played with held decisions: what both episode-based RL stages learn from.

`play_episodes` runs one `BatchedCore` lane per seed to the end of its episode with the sampled
policy, deciding anew only at events (`DecisionEvents`), and returns the decisions with the
per-step rewards. The grouped trainer turns them into leave-one-out advantages, the held-decision
PPO into critic-based ones (`segment_rewards`: the reward a held decision collected).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from coreenv import BatchedCore
from coreenv.core import DecisionEvents
from coreenv.layout import slot_width, speed_columns
from mara_agents.policy.mat import MAT

__all__ = ["PlayedEpisodes", "play_episodes", "segment_rewards"]


@dataclass(frozen=True)
class PlayedEpisodes:
    """The decisions of B whole episodes, in the order they were taken (step, then lane)."""

    obs: torch.Tensor  # (N, M, D)
    masks: torch.Tensor  # (N, M, K + 1) bool, as sampled under
    actions: torch.Tensor  # (N, M)
    log_probs: torch.Tensor  # (N, M) when sampled
    values: torch.Tensor  # (N, M) the value head's outputs when sampled (network scale)
    steps: np.ndarray  # (N,) the step each decision was taken at
    lanes: np.ndarray  # (N,) its lane
    rewards: np.ndarray  # (T, B) every step's reward, 0 once a lane's episode has ended
    completion: np.ndarray  # (B,) each episode's completion rate
    env_steps: int  # steps played, summed over lanes (each lane until its episode ended)

    @property
    def returns_to_go(self) -> np.ndarray:
        """(T, B) the undiscounted sum of each lane's rewards from each step on (γ = 1)."""
        return np.cumsum(self.rewards[::-1], axis=0)[::-1]


def play_episodes(
    core: BatchedCore,
    model: MAT,
    seeds: list[int],
    hold: int,
    feasibility: bool,
    generator: torch.Generator,
    device: str = "cpu",
) -> PlayedEpisodes:
    """Play one episode per seed to its end with ``model``'s sampled policy, holding decisions.

    A lane decides at its first step and then whenever `DecisionEvents` (``hold``,
    ``feasibility``) says so; between decisions it repeats its last joint action. ``core`` must
    have ``len(seeds)`` lanes. Leaves ``model`` in training mode.
    """
    if len(seeds) != core.num_envs:
        raise ValueError(
            f"play_episodes: {len(seeds)} seeds for {core.num_envs} lanes; one episode per lane."
        )
    config = core.config
    k = config.num_slots
    model.eval()
    view = core.reset(seeds)
    events = DecisionEvents(
        config.num_nodes, slot_width(config), hold, feasibility, speed_columns(config)
    )
    held = np.full((core.num_envs, config.num_nodes), k, np.int64)
    obs, masks, actions, log_probs, values, steps, lanes, rewards = ([] for _ in range(8))
    completion = np.zeros(core.num_envs)
    env_steps = 0
    while view.active.any():
        due = events.due(view.obs) & view.active
        if due.any():
            rows = np.flatnonzero(due)
            obs_t = torch.from_numpy(view.obs[rows]).to(device)
            occupied = torch.from_numpy(view.action_mask[rows, :k].astype(bool)).to(device)
            out = model.act(obs_t, occupied, generator=generator)
            held[rows] = out.actions.cpu().numpy()
            obs.append(obs_t)
            masks.append(out.masks)
            actions.append(out.actions)
            log_probs.append(out.log_probs)
            values.append(out.values)
            steps.append(np.full(len(rows), len(rewards)))
            lanes.append(rows)
        active = view.active
        view = core.step(held)
        env_steps += int(active.sum())
        rewards.append(np.where(active, view.rewards, 0.0))
        for lane, _, metrics in view.finished:
            completion[lane] = metrics["completion_rate"]
    model.train()
    return PlayedEpisodes(
        torch.cat(obs),
        torch.cat(masks),
        torch.cat(actions),
        torch.cat(log_probs),
        torch.cat(values),
        np.concatenate(steps),
        np.concatenate(lanes),
        np.stack(rewards),
        completion,
        env_steps,
    )


def segment_rewards(played: PlayedEpisodes) -> np.ndarray:
    """(N,) the rewards each decision collected while it was held (until its lane's next one).

    With γ = 1 a held decision is one step of a semi-Markov process whose reward is this sum.
    """
    to_go = played.returns_to_go
    here = to_go[played.steps, played.lanes]
    after = np.zeros(len(played.steps))
    for lane in np.unique(played.lanes):
        rows = np.flatnonzero(played.lanes == lane)  # in step order
        after[rows[:-1]] = to_go[played.steps[rows[1:]], lane]
    return here - after
