"""The per-episode unit of the load sweep (design §5), importable by local and Ray workers alike.

A `Job` names one episode (method, task set, arrival probability, seed); `run_job` plays it and
returns one result row. Every row carries the fingerprint of what produced it (`fingerprint.py`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from coreenv import EnvConfig, InvalidActionError
from mara_agents import seeds
from mara_agents.evaluation import run_episodes
from mara_agents.sweep.methods import make_scheduler

__all__ = [
    "EVAL_SEED_BASE",
    "SEED_GROUP_SIZE",
    "Job",
    "env_config",
    "episode_seed",
    "row_key",
    "run_job",
    "run_jobs_together",
]

EVAL_SEED_BASE = seeds.EVALUATION
"""Evaluation episodes are seeded from here up; training code uses seeds below it."""
SEED_GROUP_SIZE = 10_000
"""Episodes a seed group can hold before it would reach the next group's seeds."""


def episode_seed(base: int, episode: int) -> int:
    """The seed of evaluation episode ``episode`` of seed group ``base`` (not a training seed)."""
    return EVAL_SEED_BASE + SEED_GROUP_SIZE * base + episode


@dataclass(frozen=True)
class Job:
    """One episode of the sweep.

    ``strict`` raises on an invalid action instead of idling the node; ``env`` holds other
    `EnvConfig` fields as sorted (name, value) pairs; ``fingerprint`` identifies what produced the
    row (`job_fingerprint`), empty if not computed; ``log``: the row also holds the episode's
    joint actions (`mara_agents.evaluation.run_episodes`), what a benchmark's rows carry.
    """

    method: str
    task_set: str
    arrival_prob: float
    seed: int
    strict: bool = False
    fingerprint: str = ""
    env: tuple[tuple[str, Any], ...] = ()
    log: bool = False

    @property
    def key(self) -> tuple:
        """Identifies the episode among rows already written (a row of other code is not it)."""
        return (self.method, self.task_set, self.arrival_prob, self.seed, self.fingerprint)


def row_key(row: dict) -> tuple:
    """The `Job.key` of a written row (rows from before fingerprints match no job)."""
    return (
        row["method"],
        row["task_set"],
        row["arrival_prob"],
        row["seed"],
        row.get("fingerprint", ""),
    )


def env_config(job: Job) -> EnvConfig:
    """The environment of a job: the default regime with the job's task set, p and ``env``."""
    return EnvConfig(
        task_set=job.task_set,
        arrival_prob=job.arrival_prob,
        invalid_action="raise" if job.strict else "idle",
        **dict(job.env),
    )


def run_job(job: Job) -> dict:
    """Play one episode; the row holds the job, every design §2 metric and the wall time."""
    return run_jobs_together([job])[0]


def run_jobs_together(jobs: list[Job], factory: Callable[[], Any] | None = None) -> list[dict]:
    """Play episodes of one method with one scheduler, in lockstep if it has a batched form.

    The scheduler is ``factory()``, or the method's by name (`make_scheduler`). Each row holds
    its job (``env`` only when set), every design §2 metric and ``seconds``, the wall time per
    episode (the whole call's, shared equally). Torch, if a method uses it, gets one thread:
    sweeps run one call per worker and core.
    """
    methods = {job.method for job in jobs}
    if len(methods) != 1:
        raise ValueError(f"jobs run together must share one method, got {sorted(methods)}.")
    method = jobs[0].method
    scheduler = factory() if factory is not None else make_scheduler(method)
    if "torch" in sys.modules:  # imported by the method, if it needs it
        sys.modules["torch"].set_num_threads(1)
    start = time.perf_counter()
    try:
        episodes = [(env_config(job), job.seed) for job in jobs]
        rows = run_episodes(scheduler, episodes, log=jobs[0].log)
    except InvalidActionError as e:
        cells = sorted({f"{job.task_set} at p = {job.arrival_prob:g}" for job in jobs})
        seed = f", episode seed {jobs[0].seed}" if len(jobs) == 1 else ""
        raise InvalidActionError(f"{method} on {', '.join(cells)}{seed}: {e}") from e
    seconds = round((time.perf_counter() - start) / len(jobs), 3)
    return [{**_fields(job), **metrics, "seconds": seconds} for job, metrics in zip(jobs, rows)]


def _fields(job: Job) -> dict[str, Any]:
    """A row's job columns; ``env`` (as a dict) only when it sets anything."""
    fields = asdict(job)
    env = fields.pop("env")
    del fields["log"]  # a logged row holds its actions
    return {**fields, "env": dict(env)} if env else fields
