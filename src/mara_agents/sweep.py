"""The per-episode unit of the load sweep (design §5), importable by local and Ray workers alike.

A `Job` names one episode (method, task set, load, seed); `run_job` plays it and returns one
result row. Methods are names in `METHODS` or any scheduler importable as ``module:Class``.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from coreenv import CoreEnv
from mara_agents.evaluation import run_episode
from mara_agents.schedulers import EDF, FIFO, LARA, Oracle, RandomScheduler, Scheduler

__all__ = [
    "DEFAULT_METHODS",
    "EVAL_SEED_BASE",
    "METHODS",
    "Job",
    "episode_seed",
    "make_scheduler",
    "run_job",
]


def _lara_fm() -> Scheduler:
    """LARA with the flow-matching predictor (needs torch: imported on use)."""
    from mara_agents.predictors.flow import FMPredictor

    return LARA(predictor=FMPredictor.pretrained())


def _mara(variant: str) -> Callable[[], Scheduler]:
    """A shipped MARA variant (needs torch: imported on use)."""

    def load() -> Scheduler:
        from mara_agents.schedulers.mara import MARA

        return MARA.pretrained(variant)

    return load


METHODS: dict[str, Callable[[], Scheduler]] = {
    "fifo": FIFO,
    "edf": EDF,
    "random": RandomScheduler,
    "lara": LARA,
    "lara_fm": _lara_fm,
    "mara": _mara("mara"),
    "mara_wls": _mara("mara_wls"),
    "mara_noshape": _mara("mara_noshape"),
    "oracle": Oracle,
}

DEFAULT_METHODS = ["fifo", "edf", "random", "lara", "mara", "oracle"]
"""What the benchmark scripts compare unless told otherwise: the baselines, MARA and the oracle."""

EVAL_SEED_BASE = 1_000_000
"""Evaluation episodes are seeded from here up; training code uses seeds below it."""


def episode_seed(base: int, episode: int) -> int:
    """The seed of evaluation episode ``episode`` of seed group ``base`` (not a training seed)."""
    return EVAL_SEED_BASE + 10_000 * base + episode


@dataclass(frozen=True)
class Job:
    """One episode of the sweep."""

    method: str
    task_set: str
    load: float
    seed: int

    @property
    def key(self) -> tuple:
        """Identifies the episode among rows already written."""
        return (self.method, self.task_set, self.load, self.seed)


def make_scheduler(method: str) -> Scheduler:
    """A scheduler from a method name or ``module:Class`` (constructed without arguments)."""
    if method in METHODS:
        return METHODS[method]()
    if ":" not in method:
        raise ValueError(
            f"unknown method {method!r}: use one of {sorted(METHODS)} or module:Class."
        )
    module, name = method.split(":", 1)
    try:
        return getattr(importlib.import_module(module), name)()
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot import scheduler {method!r}: {e}") from e


def run_job(job: Job) -> dict:
    """Play one episode; the row holds the job, every design §2 metric and the wall time.

    Torch, if a method uses it, gets one thread: sweeps run one episode per worker and core.
    """
    scheduler = make_scheduler(job.method)
    if "torch" in sys.modules:  # imported by the method, if it needs it
        sys.modules["torch"].set_num_threads(1)
    env = CoreEnv(
        task_set=job.task_set, arrival_prob=job.load, predictor=scheduler.observation_predictor
    )
    start = time.perf_counter()
    metrics = run_episode(scheduler, env, job.seed)
    return {**asdict(job), **metrics, "seconds": round(time.perf_counter() - start, 3)}
