"""What a policy meets: a scheduler's decisions played out, and the scale of what it reads.

The measurement behind `MATConfig.symlog` (studies/learnability/REPORT.md, *A slot encoder
and log-scaled inputs*): the remaining-batch estimates sit at OBS_BOUND ("never") on a large
share of occupied slots while every other feature stays within a few units, a spread an input LayerNorm does not
undo.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from coreenv import CoreEnv, Decisions, EnvConfig, SlotFeature
from coreenv.layout import (
    OBS_BOUND,
    global_names,
    slot_names,
    slot_width,
    speed_columns,
    table_start,
)
from mara_agents.schedulers.base import Scheduler, predictor_for

__all__ = ["Decision", "FeatureScale", "feature_scales", "play_decisions"]


@dataclass(frozen=True)
class Decision:
    """One decision of an episode: what the nodes read, then what holding it gave."""

    observations: dict
    """The node observations the decision was made on."""
    rewards: dict
    infos: dict


def play_decisions(
    scheduler: Scheduler, config: EnvConfig, seed: int, decisions: Decisions
) -> Iterator[Decision]:
    """Play one episode with ``scheduler`` deciding at ``decisions``, one `Decision` at a time.

    The environment gets the predictor the scheduler declares (`predictor_for`).
    """
    env = CoreEnv(config, predictor=predictor_for(scheduler), decisions=decisions)
    observations, infos = env.reset(seed=seed)
    scheduler.reset(env)
    while env.agents:
        read = observations
        observations, rewards, _, _, infos = env.step(scheduler.act(observations, infos))
        yield Decision(read, rewards, infos)


@dataclass(frozen=True)
class FeatureScale:
    """One feature's values over the decisions read (slot features: occupied slots only)."""

    name: str
    low: float
    median: float
    p99: float
    high: float
    at_bound: float
    """Share of the values at ±OBS_BOUND (clipped or "never")."""


def feature_scales(
    scheduler: Scheduler, config: EnvConfig, seeds: Sequence[int], decisions: Decisions
) -> list[FeatureScale]:
    """The scale of every global and slot feature at ``scheduler``'s decisions on ``seeds``.

    Every node reads the same globals and slot table (only its one-hot id differs), so the
    first node's observation stands for all.
    """
    if not seeds:
        raise ValueError("feature_scales needs at least one episode seed.")
    start = table_start(config.num_nodes, speed_columns(config))
    width = slot_width(config)
    globals_, slots = [], []
    for seed in seeds:
        for decision in play_decisions(scheduler, config, seed, decisions):
            obs = next(iter(decision.observations.values()))["observation"]
            table = obs[start:].reshape(config.num_slots, width)
            globals_.append(obs[config.num_nodes : start])
            slots.append(table[table[:, SlotFeature.OCCUPIED] > 0.5])
    names = [*global_names(config), *slot_names(config)]
    if not globals_:
        raise ValueError(f"no decision was made on the episodes {list(seeds)}.")
    values = [*np.stack(globals_).T, *np.concatenate(slots).T]
    return [_scale(name, np.asarray(v, float)) for name, v in zip(names, values, strict=True)]


def _scale(name: str, values: np.ndarray) -> FeatureScale:
    if values.size == 0:
        return FeatureScale(name, *(4 * [float("nan")]), at_bound=float("nan"))
    low, median, p99, high = np.quantile(values, [0.0, 0.5, 0.99, 1.0])
    at_bound = float(np.mean(np.abs(values) >= OBS_BOUND))
    return FeatureScale(name, float(low), float(median), float(p99), float(high), at_bound)
