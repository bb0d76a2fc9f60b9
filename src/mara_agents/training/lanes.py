"""The lanes PPO rolls out on: a `coreenv.BatchedCore` whose episodes play seeds in start order."""

from __future__ import annotations

from typing import Any

import numpy as np

from coreenv import BatchedCore, Predictor, make_config

__all__ = ["SeedCounter", "occupied", "rollout_lanes"]


class SeedCounter:
    """``seed, seed + 1, …`` without end; unlike `itertools.count` it pickles (for resumption)."""

    def __init__(self, seed: int) -> None:
        self.next = seed

    def __iter__(self) -> SeedCounter:
        return self

    def __next__(self) -> int:
        self.next += 1
        return self.next - 1


def rollout_lanes(
    num_envs: int, seed: int, predictor: Predictor | None = None, **overrides: Any
) -> BatchedCore:
    """``num_envs`` lanes of ``EnvConfig(**overrides)`` episodes, started.

    An episode that ends is restarted at once with the next seed (seeds ``seed, seed + 1, …`` in
    the order episodes start, lanes in index order within a step), so rollouts never wait.
    ``predictor`` is one instance for every lane, so its cache is shared.
    """
    core = BatchedCore(make_config(None, **overrides), num_envs, predictor)
    core.reset(SeedCounter(seed))
    return core


def occupied(action_mask: np.ndarray) -> np.ndarray:
    """(E, K) bool: the slots each lane's nodes may train, from its (E, K + 1) action mask."""
    return action_mask[:, :-1].astype(bool)
