"""Run schedulers on episodes and average the design §2 metrics."""

from __future__ import annotations

from typing import Any

import numpy as np

from coreenv import CoreEnv
from coreenv.core.metrics import METRIC_KEYS
from mara_agents.schedulers.base import Scheduler, predictor_for

__all__ = ["evaluate", "run_episode"]


def run_episode(scheduler: Scheduler, env: CoreEnv, seed: int) -> dict[str, float]:
    """Play one episode of ``env`` with ``scheduler`` from ``seed``; return its metrics."""
    observations, infos = env.reset(seed=seed)
    scheduler.reset(env)
    while env.agents:
        observations, _, _, _, infos = env.step(scheduler.act(observations, infos))
    return env.metrics()


def evaluate(scheduler: Scheduler, episodes: int = 10, seed: int = 0, **env_overrides: Any) -> dict:
    """Mean design §2 metrics of ``scheduler`` over episodes seeded ``seed, seed + 1, …``.

    The environment gets the predictor the scheduler declares (`predictor_for`).

    Returns every metric's mean (``steps_to_ready`` over the episodes that have one), plus
    ``completion_rate_std`` (across episodes) and ``episodes``.
    """
    if not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be a positive int, got {episodes!r}.")
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}.")
    env = CoreEnv(predictor=predictor_for(scheduler), **env_overrides)
    rows = [run_episode(scheduler, env, seed + i) for i in range(episodes)]
    summary: dict[str, float] = {}
    for key in METRIC_KEYS:
        values = np.array([row[key] for row in rows], float)
        present = values[~np.isnan(values)]
        summary[key] = float(present.mean()) if present.size else float("nan")
    summary["completion_rate_std"] = float(np.std([row["completion_rate"] for row in rows]))
    summary["episodes"] = episodes
    return summary
