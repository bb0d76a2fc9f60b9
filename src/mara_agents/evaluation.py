"""Run schedulers on episodes and average the design §2 metrics.

A scheduler with a batched form (`Scheduler.act_view`) plays the episodes it is given in lockstep
on `coreenv.BatchedCore`s, one call per step for all of them; any other plays them one after
another on a `CoreEnv`. The rows are the same either way. A scheduler that declares the event
decision form (``decisions``, a `coreenv.Decisions`) plays in it: on a `CoreEnv` of that form, or
in lockstep with each episode's joint action held until an event of the same rule. Asked to, it
logs each episode's joint actions in its row (`mara_agents.replay`), so the row can be replayed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from coreenv import METRIC_KEYS, BatchedCore, CoreEnv, Decisions, EnvConfig, SchedulerView, make_config
from coreenv.core import make_decisions
from coreenv.masks import action_indices
from mara_agents.checks import check
from mara_agents.replay import encode_actions, normalised_actions
from mara_agents.schedulers.base import (
    Scheduler,
    acts_in_batches,
    observed_config,
    predictor_for,
)

__all__ = [
    "completion_rates",
    "decisions_of",
    "evaluate",
    "paired_difference",
    "run_episode",
    "run_episodes",
]


def run_episode(
    scheduler: Scheduler, env: CoreEnv, seed: int, log: list[np.ndarray] | None = None
) -> dict[str, float]:
    """Play one episode of ``env`` with ``scheduler`` from ``seed``; return its metrics.

    ``env`` must be in the decision form the scheduler declares (``CoreEnv(decisions=...)``).
    ``log``: where each decision's (M,) joint action is appended, as the environment read it.
    """
    if env.decisions != decisions_of(scheduler):
        raise ValueError(
            f"{type(scheduler).__name__} plays in {decisions_of(scheduler)}, the env decides in "
            f"{env.decisions}: build it with CoreEnv(decisions=...) of the scheduler's form."
        )
    observations, infos = env.reset(seed=seed)
    scheduler.reset(env)
    agents, k = env.possible_agents, env.config.num_slots
    while env.agents:
        actions = scheduler.act(observations, infos)
        if log is not None:
            log.append(np.empty(len(agents), np.int64))
            action_indices(actions, agents, k, log[-1])
        observations, _, _, _, infos = env.step(actions)
    return env.metrics()


def run_episodes(
    scheduler: Scheduler, episodes: Sequence[tuple[EnvConfig, int]], log: bool = False
) -> list[dict]:
    """The metrics of each ``(config, seed)`` episode, in order, with the scheduler's predictor.

    A batched scheduler plays all the episodes in lockstep (whatever their configs, as long as
    they share the observation layout); others play one episode after another. Each config gets
    the quantile levels the scheduler reads (`observed_config`). ``log``: each row also holds
    the episode's joint actions (``actions``, `encode_actions`) and its decision form
    (``decisions``), what `mara_agents.replay.replay` plays again.
    """
    predictor = predictor_for(scheduler)
    decisions = decisions_of(scheduler)
    episodes = [(observed_config(scheduler, config), seed) for config, seed in episodes]
    rows: list[dict] = [{} for _ in episodes]
    logs: list[list[np.ndarray]] | None = [[] for _ in episodes] if log else None
    if acts_in_batches(scheduler):
        cores = []
        for config, members in _by_config(episodes):
            core = BatchedCore(config, len(members), predictor, decisions)
            core.reset([episodes[i][1] for i in members])
            cores.append((core, members))
        _run_lockstep(scheduler, cores, rows, logs)
    else:
        envs: list[CoreEnv] = []
        for index in range(len(episodes)):
            config, seed = episodes[index]
            env = next((env for env in envs if env.config == config), None)
            if env is None:
                env = CoreEnv(config, predictor=predictor, decisions=decisions)
                envs.append(env)
            rows[index] = run_episode(scheduler, env, seed, None if logs is None else logs[index])
    if logs is not None:
        form = dataclasses.asdict(decisions)
        for row, episode, (config, _) in zip(rows, logs, episodes):
            row["actions"] = encode_actions(episode, config.num_nodes)
            row["decisions"] = form
    return rows


def _by_config(episodes: Sequence[tuple[EnvConfig, int]]) -> list[tuple[EnvConfig, list[int]]]:
    """Each distinct config with the indices of its episodes, in order of appearance."""
    groups: list[tuple[EnvConfig, list[int]]] = []
    for index, (config, _) in enumerate(episodes):
        members = next((m for c, m in groups if c == config), None)
        if members is None:
            groups.append((config, [index]))
        else:
            members.append(index)
    return groups


def _run_lockstep(
    scheduler: Scheduler,
    cores: list[tuple[BatchedCore, list[int]]],
    rows: list[dict],
    logs: list[list[np.ndarray]] | None,
) -> None:
    """Play every core's lanes to the end; ``rows[members[lane]]`` gets each lane's metrics.

    One `act_view` per step of the cores, on one view of the running episodes of every core (in
    the event form a core's step holds each lane's action until its own event). ``logs``: where
    each running episode's joint action is appended, by episode.
    """
    clairvoyant = getattr(scheduler, "clairvoyant", False)
    while running := [(core, members) for core, members in cores if core.active.any()]:
        active = [core.active.copy() for core, _ in running]
        views = [core.view(clairvoyant) for core, _ in running]
        views = [view if on.all() else view.take(on) for view, on in zip(views, active)]
        chosen = scheduler.act_view(SchedulerView.concat(views))
        start = 0
        for (core, members), on in zip(running, active):
            config, count = core.config, int(on.sum())
            actions = np.full((len(members), config.num_nodes), config.num_slots, np.int64)
            actions[on] = chosen[start : start + count]
            start += count
            if logs is not None:
                played = normalised_actions(actions, config.num_slots)
                for lane in np.flatnonzero(on).tolist():
                    logs[members[lane]].append(played[lane])
            for lane, _, metrics in core.step(actions).finished:
                rows[members[lane]] = metrics


def decisions_of(scheduler: Any) -> Decisions:
    """The decision form ``scheduler`` plays in: its ``decisions`` (a form's name too)."""
    return make_decisions(getattr(scheduler, "decisions", None))


def evaluate(scheduler: Scheduler, episodes: int = 10, seed: int = 0, **env_overrides: Any) -> dict:
    """Mean design §2 metrics of ``scheduler`` over episodes seeded ``seed, seed + 1, …``.

    The environment gets the predictor the scheduler declares (`predictor_for`).

    Returns every metric's mean (``steps_to_ready`` over the episodes that have one), plus
    ``completion_rate_std`` (across episodes) and ``episodes``.
    """
    check(episodes, "an int >= 1", "episodes")
    check(seed, "an int >= 0", "seed")
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
