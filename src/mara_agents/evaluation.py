"""Run schedulers on episodes and average the design §2 metrics.

A scheduler with a batched form (`Scheduler.act_batch`) plays the episodes it is given in lockstep
on `coreenv.BatchedCore`s, one call per step for all of them; any other plays them one after
another on a `CoreEnv`. The rows are the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from coreenv import BatchedCore, CoreEnv, EnvConfig, Predictor
from coreenv.config import make_config
from coreenv.core.metrics import METRIC_KEYS
from mara_agents.schedulers.base import (
    Scheduler,
    acts_in_batches,
    observed_config,
    predictor_for,
)

__all__ = ["completion_rates", "evaluate", "paired_difference", "run_episode", "run_episodes"]


def run_episode(scheduler: Scheduler, env: CoreEnv, seed: int) -> dict[str, float]:
    """Play one episode of ``env`` with ``scheduler`` from ``seed``; return its metrics."""
    observations, infos = env.reset(seed=seed)
    scheduler.reset(env)
    while env.agents:
        observations, _, _, _, infos = env.step(scheduler.act(observations, infos))
    return env.metrics()


def run_episodes(scheduler: Scheduler, episodes: Sequence[tuple[EnvConfig, int]]) -> list[dict]:
    """The metrics of each ``(config, seed)`` episode, in order, with the scheduler's predictor.

    Episodes of a batched scheduler run in lockstep (all of them at once, whatever their configs,
    as long as they share the observation layout); others run one after another. Each config gets
    the quantile levels the scheduler reads (`observed_config`).
    """
    predictor = predictor_for(scheduler)
    episodes = [(observed_config(scheduler, config), seed) for config, seed in episodes]
    if acts_in_batches(scheduler):
        return _run_lockstep(scheduler, predictor, episodes)
    envs: list[CoreEnv] = []
    rows = []
    for config, seed in episodes:
        env = next((env for env in envs if env.config == config), None)
        if env is None:
            env = CoreEnv(config, predictor=predictor)
            envs.append(env)
        rows.append(run_episode(scheduler, env, seed))
    return rows


def _run_lockstep(
    scheduler: Scheduler, predictor: Predictor | None, episodes: Sequence[tuple[EnvConfig, int]]
) -> list[dict]:
    """One `BatchedCore` per distinct config, one lane per episode; one `act_batch` per step."""
    groups: list[tuple[EnvConfig, list[int]]] = []  # a config and its episodes' indices
    for index, (config, _) in enumerate(episodes):
        members = next((m for c, m in groups if c == config), None)
        if members is None:
            groups.append((config, [index]))
        else:
            members.append(index)
    cores = [BatchedCore(config, len(members), predictor) for config, members in groups]
    views = [
        core.reset([episodes[i][1] for i in members]) for core, (_, members) in zip(cores, groups)
    ]
    rows: list[dict] = [{} for _ in episodes]
    while any(view.active.any() for view in views):
        live = [view.active for view in views]
        chosen = scheduler.act_batch(
            np.concatenate([view.obs[on] for view, on in zip(views, live)]),
            np.concatenate([view.action_mask[on] for view, on in zip(views, live)]),
        )
        start = 0
        for g, (core, (config, members)) in enumerate(zip(cores, groups)):
            actions = np.full((len(members), config.num_nodes), config.num_slots, np.int64)
            count = int(live[g].sum())
            actions[live[g]] = chosen[start : start + count]
            start += count
            views[g] = core.step(actions)
            for lane, _, metrics in views[g].finished:
                rows[members[lane]] = metrics
    return rows


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
    rows = _seeded_rows(scheduler, episodes, seed, env_overrides)
    summary: dict[str, float] = {}
    for key in METRIC_KEYS:
        values = np.array([row[key] for row in rows], float)
        present = values[~np.isnan(values)]
        summary[key] = float(present.mean()) if present.size else float("nan")
    summary["completion_rate_std"] = float(np.std([row["completion_rate"] for row in rows]))
    summary["episodes"] = episodes
    return summary


def completion_rates(
    scheduler: Scheduler, episodes: int, seed: int, **env_overrides: Any
) -> np.ndarray:
    """(episodes,) completion rate of each episode seeded ``seed, seed + 1, …``, in order."""
    rows = _seeded_rows(scheduler, episodes, seed, env_overrides)
    return np.array([row["completion_rate"] for row in rows], float)


def _seeded_rows(
    scheduler: Scheduler, episodes: int, seed: int, env_overrides: dict[str, Any]
) -> list[dict]:
    """The metrics of the episodes seeded ``seed, seed + 1, …`` of one config, in order."""
    config = make_config(None, **env_overrides)
    return run_episodes(scheduler, [(config, seed + i) for i in range(episodes)])


def paired_difference(first: np.ndarray, second: np.ndarray) -> tuple[float, float]:
    """Mean of ``second − first`` over paired episodes and its standard error."""
    diff = np.asarray(second, float) - np.asarray(first, float)
    if diff.ndim != 1 or diff.size < 2:
        raise ValueError(f"need two paired 1-D samples of >= 2 episodes, got shape {diff.shape}.")
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(diff.size))
