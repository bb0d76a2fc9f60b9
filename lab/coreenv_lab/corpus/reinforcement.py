"""RL runs of the corpus: small policy-gradient learners written here, cheap enough for 2 cores.

The loss of an RL run is ``1 − normalised return`` (as in the bundled bank, `curvegen.rl`): one
batch is `STEPS_PER_BATCH` environment steps (pulls, for the bandit). The *validation* curve is
the mean over the last `SMOOTHING` finished episodes (for the bandit: the policy's exact expected
reward); the *training* curve is the last finished episode alone (the bandit: the batch's mean
reward), the noisy figure a user's logger prints. Until the first episode ends, both hold the
untrained policy's loss.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from coreenv_lab.corpus.training import FLOOR, RunCurves
from curvegen.rl import RETURN_RANGE, SMOOTHING, STEPS_PER_BATCH
from curvegen.specs import RunSpec

__all__ = ["ENVIRONMENTS", "rl_run"]

ENVIRONMENTS = ("CartPole-v1", "Acrobot-v1", "bandit", "gridworld")
GRID = 6  # gridworld side; start at one corner, goal at the opposite one
GRID_STEPS = 60  # episode cap of the gridworld


class _Curves:
    """Turns finished episodes' normalised losses into the two per-batch curves."""

    def __init__(self, initial: float) -> None:
        self.episodes: list[float] = []
        self.validation, self.train = [initial], [initial]

    def batch_done(self) -> None:
        if self.episodes:
            self.validation.append(float(np.mean(self.episodes[-SMOOTHING:])))
            self.train.append(self.episodes[-1])
        else:
            self.validation.append(self.validation[-1])
            self.train.append(self.train[-1])

    def result(self, batches: int) -> RunCurves:
        return RunCurves(
            *(
                np.maximum(np.asarray(c[: batches + 1]), FLOOR)
                for c in (self.validation, self.train)
            )
        )


def _gym_run(spec: RunSpec, task: str) -> RunCurves:
    """Actor-critic (``critic=True``: n-step advantages over each batch) or REINFORCE on ``task``.

    REINFORCE updates at each episode's end with its normalised discounted returns.
    """
    import gymnasium as gym

    hp = spec.hparams
    worst, best = RETURN_RANGE[task]
    env = gym.make(task)
    torch.manual_seed(spec.seed)
    obs_size, actions = env.observation_space.shape[0], env.action_space.n
    policy = nn.Sequential(
        nn.Linear(obs_size, hp["hidden"]), nn.Tanh(), nn.Linear(hp["hidden"], actions)
    )
    value = nn.Sequential(nn.Linear(obs_size, hp["hidden"]), nn.Tanh(), nn.Linear(hp["hidden"], 1))
    params = [*policy.parameters(), *value.parameters()]
    optimizer = torch.optim.Adam(params, lr=hp["learning_rate"])
    gamma, critic = hp["gamma"], hp["critic"]
    curves = _Curves(1.0)
    obs, _ = env.reset(seed=spec.seed)
    episode_return, trajectory = 0.0, []  # trajectory: (log_prob, entropy, value, reward, done)
    for _batch in range(spec.batches):
        for _ in range(STEPS_PER_BATCH):
            state = torch.as_tensor(obs, dtype=torch.float32)
            dist = torch.distributions.Categorical(logits=policy(state))
            action = dist.sample()
            obs, reward, terminated, truncated, _ = env.step(int(action))
            episode_return += float(reward)
            trajectory.append(
                (dist.log_prob(action), dist.entropy(), value(state)[0], reward, terminated)
            )
            if terminated or truncated:
                curves.episodes.append(max(1.0 - (episode_return - worst) / (best - worst), FLOOR))
                obs, _ = env.reset()
                episode_return = 0.0
                if not critic:
                    _update(optimizer, trajectory, gamma, hp["entropy"], bootstrap=None)
                    trajectory = []
        if critic:
            with torch.no_grad():
                bootstrap = value(torch.as_tensor(obs, dtype=torch.float32))[0]
            _update(optimizer, trajectory, gamma, hp["entropy"], bootstrap)
            trajectory = []
        curves.batch_done()
    return curves.result(spec.batches)


def _update(optimizer, trajectory, gamma: float, entropy: float, bootstrap) -> None:
    """One policy-gradient step (actor-critic with ``bootstrap``, else REINFORCE)."""
    returns, running = [], 0.0 if bootstrap is None else float(bootstrap)
    for *_, reward, done in reversed(trajectory):
        running = reward + gamma * running * (not done)
        returns.append(running)
    returns = torch.tensor(returns[::-1], dtype=torch.float32)
    log_probs = torch.stack([t[0] for t in trajectory])
    entropies = torch.stack([t[1] for t in trajectory])
    values = torch.stack([t[2] for t in trajectory])
    if bootstrap is None:
        advantage = (
            (returns - returns.mean()) / (returns.std() + 1e-8) if len(returns) > 1 else returns
        )
        loss = -(log_probs * advantage).mean()
    else:
        advantage = (returns - values).detach()
        loss = -(log_probs * advantage).mean() + 0.5 * ((returns - values) ** 2).mean()
    loss = loss - entropy * entropies.mean()
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], 1.0)
    optimizer.step()


def _bandit_run(spec: RunSpec) -> RunCurves:
    """Softmax policy gradient with a running-mean baseline on a 10-armed Gaussian bandit."""
    hp = spec.hparams
    rng = np.random.default_rng(spec.seed)
    means = rng.standard_normal(hp["arms"])
    low, high = means.min(), means.max()
    logits = np.zeros(hp["arms"])
    baseline = 0.0

    def loss_of(expected: float) -> float:
        return max(1.0 - (expected - low) / (high - low), FLOOR)

    policy = np.exp(logits - logits.max())
    policy /= policy.sum()
    validation, train = [loss_of(policy @ means)], [loss_of(policy @ means)]
    for _ in range(spec.batches):
        arms = rng.choice(hp["arms"], size=STEPS_PER_BATCH, p=policy)
        rewards = means[arms] + hp["reward_noise"] * rng.standard_normal(STEPS_PER_BATCH)
        gradient = np.zeros_like(logits)
        for arm, reward in zip(arms, rewards):
            gradient += (reward - baseline) * ((np.arange(hp["arms"]) == arm) - policy)
        baseline += 0.1 * (rewards.mean() - baseline)
        logits += hp["learning_rate"] * gradient / STEPS_PER_BATCH
        policy = np.exp(logits - logits.max())
        policy /= policy.sum()
        validation.append(loss_of(policy @ means))
        train.append(loss_of(float(rewards.mean())))
    return RunCurves(np.asarray(validation), np.asarray(train))


def _gridworld_run(spec: RunSpec) -> RunCurves:
    """Tabular softmax REINFORCE on a gridworld; the loss is the steps taken / the episode cap."""
    hp = spec.hparams
    rng = np.random.default_rng(spec.seed)
    logits = np.zeros((GRID * GRID, 4))
    moves = np.array([(0, 1), (1, 0), (0, -1), (-1, 0)])
    walls = rng.random((GRID, GRID)) < hp["walls"]
    walls[0, 0] = walls[-1, -1] = False
    curves = _Curves(1.0)
    position, visited = np.array([0, 0]), []
    for _ in range(spec.batches):
        for _ in range(STEPS_PER_BATCH):
            cell = position[0] * GRID + position[1]
            policy = np.exp(logits[cell] - logits[cell].max())
            policy /= policy.sum()
            action = rng.choice(4, p=policy)
            visited.append((cell, action, policy))
            ahead = np.clip(position + moves[action], 0, GRID - 1)
            if not walls[ahead[0], ahead[1]]:
                position = ahead
            reached = bool((position == GRID - 1).all())
            if reached or len(visited) >= GRID_STEPS:
                steps = len(visited)
                curves.episodes.append(max(steps / GRID_STEPS if reached else 1.0, FLOOR))
                reward = (GRID_STEPS - steps) / GRID_STEPS if reached else 0.0
                for cell, action, policy in visited:  # return = the episode's end reward
                    logits[cell] += (
                        hp["learning_rate"]
                        * (reward - hp["baseline"])
                        * ((np.arange(4) == action) - policy)
                    )
                position, visited = np.array([0, 0]), []
        curves.batch_done()
    return curves.result(spec.batches)


def rl_run(spec: RunSpec, environment: str) -> RunCurves:
    """Train ``spec`` on ``environment`` (one of `ENVIRONMENTS`) and record both curves."""
    if environment == "bandit":
        return _bandit_run(spec)
    if environment == "gridworld":
        return _gridworld_run(spec)
    with torch.random.fork_rng(devices=[]):
        return _gym_run(spec, environment)
