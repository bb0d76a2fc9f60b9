"""A sweep's settings: its grid, the episodes' environment, where it runs, where rows go."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coreenv import EnvConfig
from coreenv.config import capacity_load, check_arrival_prob
from mara_agents.sweep.jobs import SEED_GROUP_SIZE
from mara_agents.sweep.methods import DEFAULT_METHODS, SweepInputError, method_factory, validate

__all__ = ["BACKENDS", "QUICK_EPISODES", "REFERENCE_LOADS", "SweepConfig"]

BACKENDS = ("local", "ray")
"""Where a sweep's episodes run: a local process pool or Ray."""
QUICK_EPISODES = 4
"""Episodes per seed and cell of ``--quick``: a smoke run of the whole grid."""
REFERENCE_LOADS = (0.04, 0.05, 0.06, 0.07)
"""The paper's arrival probabilities on its four equal nodes: a sweep's default grid is these
loads per unit of capacity, on the episodes' cluster (`coreenv.config.capacity_load`)."""


@dataclass(frozen=True)
class SweepConfig:
    """The grid of a sweep and where it runs.

    The grid: task sets × arrival probabilities p × methods × seed groups × episodes. Cheap
    checks run at construction; `checked` also builds every method and task set.
    """

    arrival_prob: tuple[float, ...] | None = None
    """Arrival probabilities p to sweep, each in [0, 1] (`coreenv.config.check_arrival_prob`);
    None: `REFERENCE_LOADS` scaled to the capacity of the ``env`` cluster (0.04-0.07 at four
    equal nodes, 0.08-0.14 at eight)."""
    task_sets: tuple[str, ...] = ("id", "rl_ood", "vit_ood")
    """Task-set names or bank paths (`coreenv.curves.TASK_SETS`)."""
    methods: tuple[Any, ...] = DEFAULT_METHODS
    """Method names (`METHODS`), ``module:Class``, scheduler objects (copied for each run) or
    factories (called for each run); objects and factories are named by their ``name`` attribute,
    else their class's or function's name (`method_factory`)."""
    seeds: tuple[int, ...] = (0,)
    """Seed groups; episode i of group g has seed `episode_seed(g, i)`."""
    episodes: int = 100
    """Episodes per seed group and cell."""
    workers: int = 2
    """Local worker processes."""
    backend: str = "local"
    """"local" (a process pool) or "ray"."""
    ray_address: str | None = None
    """``ray.init`` address; None starts a local Ray."""
    out: Path | None = None
    """Results folder (``rows.jsonl`` as episodes finish, ``run.json``; a rerun resumes); None:
    nothing is written and `run_sweep` returns the rows from memory."""
    strict: bool = False
    """Raise at the first invalid action instead of idling the node and counting it."""
    env: Mapping[str, Any] = field(default_factory=dict)
    """Other `EnvConfig` fields of every episode, e.g. ``{"num_nodes": 8}`` (task set, arrival
    probability and invalid-action policy are the sweep's own axes)."""

    def __post_init__(self) -> None:
        if self.arrival_prob is None:
            nodes, speeds = self.env.get("num_nodes", 4), self.env.get("node_speeds")
            loads = tuple(capacity_load(p, nodes, speeds) for p in REFERENCE_LOADS)
            object.__setattr__(self, "arrival_prob", loads)
        for name in ("arrival_prob", "task_sets", "methods", "seeds"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
            if not getattr(self, name):
                raise ValueError(f"SweepConfig.{name} is empty.")
        if self.episodes < 1 or self.workers < 1 or min(self.seeds) < 0:
            raise ValueError(
                "SweepConfig needs episodes >= 1, workers >= 1 and seeds >= 0, got "
                f"episodes={self.episodes}, workers={self.workers}, seeds={self.seeds}."
            )
        for name, values in [("methods", self.names)] + [
            (name, getattr(self, name)) for name in ("task_sets", "arrival_prob", "seeds")
        ]:
            if len(set(values)) != len(values):
                raise ValueError(f"SweepConfig.{name} has duplicates: {values}.")
        if self.episodes > SEED_GROUP_SIZE:
            raise ValueError(
                f"SweepConfig.episodes must be <= {SEED_GROUP_SIZE} (seed groups would overlap); "
                f"use more seeds instead, got {self.episodes}."
            )
        for p in self.arrival_prob:
            check_arrival_prob(p, "SweepConfig.arrival_prob")
        if self.backend not in BACKENDS:
            raise ValueError(
                f"SweepConfig.backend must be one of {BACKENDS}, got {self.backend!r}."
            )
        axes = sorted(set(self.env) & {"task_set", "arrival_prob", "invalid_action"})
        if axes:
            raise ValueError(
                f"SweepConfig.env sets {axes}: use task_sets, arrival_prob and strict instead."
            )
        try:
            EnvConfig(**self.env)
        except TypeError as e:  # an unknown field
            raise ValueError(f"SweepConfig.env: {e}") from e

    @classmethod
    def checked(cls, **fields: Any) -> SweepConfig:
        """A config whose every name was also built and checked; `SweepInputError` if any is bad.

        Command lines call this before any work and report the error in one line.
        """
        try:
            config = cls(**fields)
        except ValueError as e:
            raise SweepInputError(str(e)) from e
        validate(config.methods, config.task_sets, config.arrival_prob, config.env)
        return config

    @property
    def names(self) -> tuple[str, ...]:
        """The methods' names, in order: the rows' and tables' ``method``."""
        return tuple(method_factory(method)[0] for method in self.methods)

    @property
    def factories(self) -> dict[str, Callable[[], Any]]:
        """A factory of a fresh scheduler for each method, by name."""
        return dict(method_factory(method) for method in self.methods)

    @property
    def run_name(self) -> str:
        """A folder name that differs between runs of different grids (CleanRL-style)."""
        grid = [
            self.names,
            self.task_sets,
            self.arrival_prob,
            self.seeds,
            self.episodes,
            self.strict,
        ]
        if self.env:
            grid.append(sorted(self.env.items()))
        digest = hashlib.sha256(json.dumps(grid).encode()).hexdigest()[:8]
        return f"sweep_{len(self.methods)}m_{self.episodes}ep_{digest}"
