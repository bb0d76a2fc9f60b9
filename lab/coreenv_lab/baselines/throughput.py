"""How fast the RL baselines train: steps per second, and the wall time to each evaluation.

`benchmarks/bench_training.py` prints these beside CartPole's random steps per second, measured in
the same run. A MaskablePPO step is one node's choice in the sequential form; an IPPO step is one
joint decision.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from coreenv_lab.baselines.ippo import IPPOConfig, IPPOLearner, train_ippo
from coreenv_lab.training.throughput import Throughput
from mara_agents.training.maskable_ppo import (
    MaskablePPOConfig,
    new_model,
    train_maskable_ppo,
    training_envs,
)
from mara_agents.training.runs import BaselineRun

__all__ = [
    "Evaluation",
    "first_past",
    "ippo_throughput",
    "maskable_ppo_throughput",
    "timeline",
    "update_flops",
]


def maskable_ppo_throughput(config: MaskablePPOConfig, updates: int = 2) -> Throughput:
    """Time a fresh run of ``updates`` updates: lanes and model made, rollouts and PPO epochs.

    ``training`` counts everything from making the lanes on; ``rollout`` the steps over the time
    outside SB3's ``train`` (the updates), start-up included.
    """
    start = time.perf_counter()
    envs = training_envs(config)
    model = new_model(config, envs)
    envs.seed(config.env_seed)
    updating = 0.0
    train = model.train

    def timed_train() -> None:
        nonlocal updating
        began = time.perf_counter()
        train()
        updating += time.perf_counter() - began

    model.train = timed_train  # type: ignore[method-assign]
    steps = updates * config.envs * config.n_steps
    model.learn(steps)
    seconds = time.perf_counter() - start
    return Throughput(steps / (seconds - updating), steps / seconds, steps)


def ippo_throughput(config: IPPOConfig, updates: int = 2) -> Throughput:
    """Time a fresh run of ``updates`` updates (`IPPOLearner`), start-up included."""
    start = time.perf_counter()
    run = IPPOLearner(config)
    updating = 0.0
    for _ in range(updates):
        rollout = run.collect()
        began = time.perf_counter()
        run.learn(rollout)
        updating += time.perf_counter() - began
    seconds = time.perf_counter() - start
    return Throughput(run.steps / (seconds - updating), run.steps / seconds, run.steps)


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of a run on the selection episodes, timed from the run's start."""

    minutes: float
    """Wall time since the run began: start-up, training and earlier evaluations included."""
    steps: int
    """The learner's steps trained."""
    score: float
    """Mean completion on the selection episodes."""


def timeline(config: BaselineRun) -> list[Evaluation]:
    """Train ``config`` (a fresh ``work`` folder) as its trainer does; each evaluation timed.

    The evaluation of the untrained start is left out.
    """
    train = {MaskablePPOConfig: train_maskable_ppo, IPPOConfig: train_ippo}[type(config)]
    start = time.perf_counter()
    stamps: list[float] = []  # `record` logs once per evaluation after the start's
    history = train(config, log=lambda line: stamps.append(time.perf_counter() - start))
    return [
        Evaluation(seconds / 60, entry["steps"], entry["eval"])
        for seconds, entry in zip(stamps, history[1:])
    ]


def first_past(evaluations: list[Evaluation], score: float) -> Evaluation | None:
    """The first evaluation at or above ``score``, or None."""
    return next((e for e in evaluations if e.score >= score), None)


def update_flops(config: MaskablePPOConfig) -> float:
    """Floating-point operations one update spends per step it learns from (all its epochs).

    Counted by torch's flop counter on one minibatch of the run's policy: the forward pass that
    scores the taken actions and values the states, and its backward pass; the optimiser's own
    arithmetic is left out. What bounds an update's speed on a CPU whatever the client.
    """
    envs = training_envs(config)
    policy = new_model(config, envs).policy
    obs = torch.as_tensor(envs.reset())
    actions = torch.zeros(len(obs), dtype=torch.int64)  # idle: always allowed
    masks = np.stack(envs.env_method("action_masks")).reshape(len(obs), -1)
    with FlopCounterMode(display=False) as counter:
        values, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
        (values.sum() + log_prob.sum() + entropy.sum()).backward()
    return counter.get_total_flops() / len(obs) * config.epochs
