"""The per-episode unit of the load sweep (design §5), importable by local and Ray workers alike.

A `Job` names one episode (method, task set, load, seed); `run_job` plays it and returns one
result row. Methods are names in `METHODS` or any scheduler importable as ``module:Class``.
Every row carries the fingerprint of what produced it (`method_fingerprint`, the environment
config, the package version), so results of an edited scheduler are never mistaken for new ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import coreenv
from coreenv import CoreEnv, EnvConfig, InvalidActionError
from coreenv.curves import TASK_SETS, resolve_task_set
from mara_agents.evaluation import run_episode
from mara_agents.schedulers import EDF, FIFO, LARA, Oracle, RandomScheduler, Scheduler
from mara_agents.schedulers.base import predictor_for

__all__ = [
    "DEFAULT_METHODS",
    "EVAL_SEED_BASE",
    "METHODS",
    "Job",
    "SweepInputError",
    "env_config",
    "episode_seed",
    "job_fingerprint",
    "make_scheduler",
    "method_fingerprint",
    "row_key",
    "run_job",
    "validate",
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


class SweepInputError(ValueError):
    """A method, task set or load of a sweep is not valid; the message lists the valid choices."""


def episode_seed(base: int, episode: int) -> int:
    """The seed of evaluation episode ``episode`` of seed group ``base`` (not a training seed)."""
    return EVAL_SEED_BASE + 10_000 * base + episode


@dataclass(frozen=True)
class Job:
    """One episode of the sweep.

    ``strict`` raises on an invalid action instead of idling the node; ``fingerprint`` identifies
    what produced the row (see `method_fingerprint`), empty if not computed.
    """

    method: str
    task_set: str
    load: float
    seed: int
    strict: bool = False
    fingerprint: str = ""

    @property
    def key(self) -> tuple:
        """Identifies the episode among rows already written (a row of other code is not it)."""
        return (self.method, self.task_set, self.load, self.seed, self.fingerprint)


def row_key(row: dict) -> tuple:
    """The `Job.key` of a written row (rows from before fingerprints match no job)."""
    return (row["method"], row["task_set"], row["load"], row["seed"], row.get("fingerprint", ""))


def env_config(job: Job) -> EnvConfig:
    """The environment of a job: the default regime at the job's task set and load."""
    return EnvConfig(
        task_set=job.task_set,
        arrival_prob=job.load,
        invalid_action="raise" if job.strict else "idle",
    )


def make_scheduler(method: str) -> Scheduler:
    """A scheduler from a method name or ``module:Class`` (constructed without arguments).

    ``module`` is looked up as ``python -m`` would: the current directory first, then the path.
    """
    if method in METHODS:
        return METHODS[method]()
    if ":" not in method:
        raise SweepInputError(
            f"unknown method {method!r}: use one of {sorted(METHODS)} or module:Class."
        )
    module, name = method.split(":", 1)
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        scheduler_class = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise SweepInputError(
            f"cannot import scheduler {method!r}: {e} (looked in the current directory {cwd} "
            "and on sys.path)."
        ) from e
    return scheduler_class()


def validate(methods: Iterable[str], task_sets: Iterable[str], loads: Iterable[float]) -> None:
    """Check every name and value of a sweep before any work; raise `SweepInputError` if bad."""
    for method in methods:
        make_scheduler(method)
    for task_set in task_sets:
        try:
            resolve_task_set(task_set)
        except ValueError as e:  # ConfigError, BankError
            raise SweepInputError(
                f"task set {task_set!r}: {e} Valid names: {sorted(TASK_SETS)}."
            ) from e
    for load in loads:
        if not 0.0 < load <= 1.0:
            raise SweepInputError(f"load {load!r} is not an arrival probability in (0, 1].")


def method_fingerprint(scheduler: Any) -> str:
    """A digest of what decides a scheduler's actions: its code, parameters and predictor.

    It covers the source files of the scheduler's classes (and its predictor's), the values of
    their attributes, and the weights of any torch module they hold: edit the scheduler or swap a
    checkpoint and the digest changes.
    """
    digest = hashlib.sha256()
    _feed(digest, scheduler, depth=0)
    _feed(digest, predictor_for(scheduler), depth=0)
    return digest.hexdigest()[:16]


def job_fingerprint(method_digest: str, job: Job) -> str:
    """The row fingerprint: method digest, environment config and package version."""
    config = dataclasses.replace(job, fingerprint="")
    text = f"{method_digest}|{env_config(config)!r}|coreenv {coreenv.__version__}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_DEPTH = 3  # scheduler -> its predictor -> the predictor's config -> the config's fields


def _feed(digest: Any, value: Any, depth: int) -> None:
    """Add ``value`` to ``digest``: sources of its classes, then its state, a few levels deep."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, tuple)):
        digest.update(repr(value).encode())
        return
    if isinstance(value, np.ndarray):
        digest.update(value.tobytes())
        return
    if isinstance(value, (list, dict)):
        items = sorted(value.items(), key=repr) if isinstance(value, dict) else enumerate(value)
        for key, item in items if depth < _DEPTH else ():
            digest.update(repr(key).encode())
            _feed(digest, item, depth + 1)
        return
    state_dict = getattr(value, "state_dict", None)
    if callable(state_dict) and "torch" in sys.modules:  # a torch module: its weights
        for name, tensor in state_dict().items():
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().numpy().tobytes())
    for cls in type(value).__mro__:
        if cls.__module__ in ("builtins", "abc", "typing") or cls.__module__.startswith("torch"):
            continue
        try:
            digest.update(inspect.getsource(sys.modules[cls.__module__]).encode())
        except (OSError, TypeError, KeyError):
            digest.update(cls.__qualname__.encode())
    if depth < _DEPTH and hasattr(value, "__dict__") and not callable(state_dict):
        for name, item in sorted(vars(value).items()):
            if name != "env":  # set by reset, not part of the scheduler
                digest.update(name.encode())
                _feed(digest, item, depth + 1)


def run_job(job: Job) -> dict:
    """Play one episode; the row holds the job, every design §2 metric and the wall time.

    Torch, if a method uses it, gets one thread: sweeps run one episode per worker and core.
    """
    scheduler = make_scheduler(job.method)
    if "torch" in sys.modules:  # imported by the method, if it needs it
        sys.modules["torch"].set_num_threads(1)
    env = CoreEnv(env_config(job), predictor=predictor_for(scheduler))
    start = time.perf_counter()
    try:
        metrics = run_episode(scheduler, env, job.seed)
    except InvalidActionError as e:
        raise InvalidActionError(
            f"{job.method} on {job.task_set} at p = {job.load:g}, episode seed {job.seed}: {e}"
        ) from e
    return {**asdict(job), **metrics, "seconds": round(time.perf_counter() - start, 3)}
