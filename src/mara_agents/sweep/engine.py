"""Running a sweep: its config, the plan of jobs, local and Ray runners, resumable rows, progress.

One JSON row per episode is appended to ``<folder>/rows.jsonl`` as soon as it finishes, so an
interruption loses nothing finished and a rerun skips the rows already there; a row counts as
done only if its fingerprint matches what would produce it now.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from tqdm import tqdm

from coreenv import EnvConfig
from mara_agents.schedulers.base import acts_in_batches
from mara_agents.sweep.fingerprint import job_fingerprint, method_fingerprint
from mara_agents.sweep.jobs import SEED_GROUP_SIZE, Job, episode_seed, row_key, run_jobs_together
from mara_agents.sweep.methods import DEFAULT_METHODS, SweepInputError, method_factory, validate

__all__ = [
    "BACKENDS",
    "BATCH_LANES",
    "QUICK_EPISODES",
    "Progress",
    "SweepConfig",
    "plan",
    "read_rows",
    "run_jobs",
    "run_sweep",
    "work_units",
]

BACKENDS = ("local", "ray")
BATCH_LANES = 256
"""Most episodes a batched method plays in lockstep in one worker call."""
QUICK_EPISODES = 4
"""Episodes per seed and cell of ``--quick``: a smoke run of the whole grid."""


@dataclass(frozen=True)
class SweepConfig:
    """The grid of a sweep (task sets × loads × methods × seed groups × episodes) and where it runs.

    Cheap checks run at construction; `checked` also builds every method and task set.
    """

    loads: tuple[float, ...] = (0.04, 0.05, 0.06, 0.07)
    """Arrival probabilities p, each in (0, 1]."""
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
    """Other `EnvConfig` fields of every episode, e.g. ``{"num_nodes": 8}`` (task set, load and
    invalid-action policy are the sweep's own axes)."""

    def __post_init__(self) -> None:
        for name in ("loads", "task_sets", "methods", "seeds"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
            if not getattr(self, name):
                raise ValueError(f"SweepConfig.{name} is empty.")
        if self.episodes < 1 or self.workers < 1 or min(self.seeds) < 0:
            raise ValueError(
                "SweepConfig needs episodes >= 1, workers >= 1 and seeds >= 0, got "
                f"episodes={self.episodes}, workers={self.workers}, seeds={self.seeds}."
            )
        for name, values in [("methods", self.names)] + [
            (name, getattr(self, name)) for name in ("task_sets", "loads", "seeds")
        ]:
            if len(set(values)) != len(values):
                raise ValueError(f"SweepConfig.{name} has duplicates: {values}.")
        if self.episodes > SEED_GROUP_SIZE:
            raise ValueError(
                f"SweepConfig.episodes must be <= {SEED_GROUP_SIZE} (seed groups would overlap); "
                f"use more seeds instead, got {self.episodes}."
            )
        bad = [load for load in self.loads if not 0.0 < load <= 1.0]
        if bad:
            raise ValueError(f"SweepConfig.loads must lie in (0, 1], got {bad}.")
        if self.backend not in BACKENDS:
            raise ValueError(
                f"SweepConfig.backend must be one of {BACKENDS}, got {self.backend!r}."
            )
        axes = sorted(set(self.env) & {"task_set", "arrival_prob", "invalid_action"})
        if axes:
            raise ValueError(
                f"SweepConfig.env sets {axes}: use task_sets, loads and strict instead."
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
        validate(config.methods, config.task_sets, config.loads)
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
        grid = [self.names, self.task_sets, self.loads, self.seeds, self.episodes, self.strict]
        if self.env:
            grid.append(sorted(self.env.items()))
        digest = hashlib.sha256(json.dumps(grid).encode()).hexdigest()[:8]
        return f"sweep_{len(self.methods)}m_{self.episodes}ep_{digest}"


def plan(config: SweepConfig) -> list[Job]:
    """Every episode of the sweep, each with the fingerprint of what will produce its row."""
    digests = {name: method_fingerprint(make()) for name, make in config.factories.items()}
    env = tuple(sorted(config.env.items()))
    jobs = []
    for task_set in config.task_sets:
        for load in config.loads:
            for method in config.names:
                for base in config.seeds:
                    for i in range(config.episodes):
                        seed = episode_seed(base, i)
                        job = Job(method, task_set, load, seed, config.strict, env=env)
                        jobs.append(replace(job, fingerprint=job_fingerprint(digests[method], job)))
    return jobs


def read_rows(path: Path) -> list[dict]:
    """Rows already written; a line cut short by an interruption is ignored (and redone)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def run_sweep(config: SweepConfig, stream: TextIO | None = None) -> list[dict]:
    """Run the sweep's missing episodes and return the rows of every one of its episodes.

    With ``config.out``, writes ``rows.jsonl`` as episodes finish and ``run.json`` (the grid and
    its fingerprints, so later readers can pick this run's rows), and skips episodes already
    there; without, plays every episode and writes nothing. Progress goes to ``stream`` (default
    stdout). `report` turns the rows into the tables.
    """
    stream = stream or sys.stdout
    jobs = plan(config)
    if config.out is None:
        return run_jobs(jobs, config, None, stream)
    folder = config.out
    folder.mkdir(parents=True, exist_ok=True)
    print(f"results go to {folder}/ (rows.jsonl as episodes finish)", file=stream)
    settings = {
        "methods": config.names,
        "task_sets": config.task_sets,
        "loads": config.loads,
        "seeds": config.seeds,
        "episodes": config.episodes,
        "strict": config.strict,
        "env": dict(config.env),
        "fingerprints": sorted({job.fingerprint for job in jobs}),
    }
    (folder / "run.json").write_text(json.dumps(settings, indent=1) + "\n")
    path = folder / "rows.jsonl"
    run_jobs(jobs, config, path, stream)
    wanted = {job.key for job in jobs}
    return [row for row in read_rows(path) if row_key(row) in wanted]


def run_jobs(jobs: list[Job], config: SweepConfig, path: Path | None, stream: TextIO) -> list[dict]:
    """Run the jobs whose rows are missing from ``path``, appending each row as it completes.

    A row of the same episode made by other code (another fingerprint) does not count as done.
    Without a ``path`` every job runs and nothing is written. Returns the new rows.
    """
    rows = read_rows(path) if path is not None else []
    done = {row_key(r) for r in rows}
    todo = [job for job in jobs if job.key not in done]
    episodes = {job.key[:4] for job in todo}
    stale = sum(1 for r in rows if row_key(r)[:4] in episodes)  # same episode, other code
    print(
        f"{len(jobs) - len(todo)} of {len(jobs)} episodes already done; running {len(todo)} "
        f"on backend {config.backend}.",
        file=stream,
    )
    if stale:
        print(
            f"{stale} earlier rows of these episodes were made by other code or settings "
            "(scheduler source, checkpoint, environment config or package version changed): "
            "they are ignored and the episodes redone.",
            file=stream,
        )
    factories = config.factories
    units = work_units(todo, factories)
    if config.backend == "ray":
        results = _run_ray(units, factories, config.ray_address)
    else:
        results = _run_local(units, factories, config.workers)
    meter = Progress(todo, config.workers if config.backend == "local" else None, stream)
    new = []
    with path.open("a") if path is not None else contextlib.nullcontext() as sink:
        for row in results:
            if sink is not None:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
            new.append(row)
            meter.update(row)
    meter.close()
    return new


def work_units(jobs: list[Job], factories: Mapping[str, Callable[[], Any]]) -> list[list[Job]]:
    """The calls of `run_jobs_together` that play ``jobs``, the longest first.

    A method with a batched form plays a task set's episodes together (up to `BATCH_LANES`), so
    one policy pass and one predictor cache serve them; any other plays one episode per call,
    with a fresh scheduler each (``factories``, by method name), as it always has.
    """
    batched = {m for m in {job.method for job in jobs} if acts_in_batches(factories[m]())}
    groups: dict[tuple[str, str], list[Job]] = defaultdict(list)
    singles = []
    for job in jobs:
        if job.method in batched:
            groups[job.method, job.task_set].append(job)
        else:
            singles.append([job])
    together = [
        group[start : start + BATCH_LANES]
        for group in groups.values()
        for start in range(0, len(group), BATCH_LANES)
    ]
    return sorted(together, key=len, reverse=True) + singles


def _run_local(
    units: list[list[Job]], factories: Mapping[str, Callable[[], Any]], workers: int
) -> Iterator[dict]:
    if workers <= 1:
        for unit in units:
            yield from run_jobs_together(unit, factories[unit[0].method])
        return
    pool = ProcessPoolExecutor(workers)
    try:
        futures = [
            pool.submit(run_jobs_together, unit, factories[unit[0].method]) for unit in units
        ]
        for future in as_completed(futures):
            yield from future.result()
    finally:  # on an error or Ctrl-C, stop at once instead of finishing the queue
        pool.shutdown(wait=True, cancel_futures=True)


def _run_ray(
    units: list[list[Job]], factories: Mapping[str, Callable[[], Any]], address: str | None
) -> Iterator[dict]:
    try:
        import ray
    except ImportError as e:
        raise SystemExit("the ray backend needs Ray: pip install 'coreenv[ray]'") from e
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_jobs_together)
    pending = [remote.remote(unit, factories[unit[0].method]) for unit in units]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield from ray.get(done[0])


class Progress:
    """A tqdm bar whose time left weights each remaining episode by its method's cost.

    Costs are the mean measured seconds per episode of each method so far (the mean of all
    methods for one not yet measured), so a slow method left for last is not underestimated (tqdm's
    own rate-based estimate would be). ``workers`` divides the work; None (a Ray cluster) uses
    the parallelism measured so far. The bar also shows each method's episodes done.
    """

    def __init__(self, jobs: list[Job], workers: int | None, stream: TextIO | None = None) -> None:
        self.total = Counter(job.method for job in jobs)
        self.left = Counter(self.total)
        self.workers = workers
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.start = time.perf_counter()
        self.bar = tqdm(
            total=len(jobs),
            file=stream or sys.stdout,
            unit="episode",
            mininterval=0.5,
            bar_format="{percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt} episodes, "
            "{elapsed} elapsed{postfix}",
        )

    def update(self, row: dict) -> None:
        """Count a finished row and redraw (tqdm redraws at most twice a second)."""
        self.left[row["method"]] -= 1
        self.seconds[row["method"]].append(row["seconds"])
        methods = " ".join(f"{m} {self.total[m] - n}/{self.total[m]}" for m, n in self.left.items())
        self.bar.set_postfix_str(f"~{self.time_left():.0f}s left; {methods}", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        """End the bar's line."""
        self.bar.close()

    def time_left(self) -> float:
        """Estimated seconds until every remaining episode is done."""
        measured = [s for values in self.seconds.values() for s in values]
        default = float(np.mean(measured)) if measured else 0.0
        cost = {m: float(np.mean(v)) for m, v in self.seconds.items()}
        work = sum(n * cost.get(method, default) for method, n in self.left.items())
        if self.workers is not None:
            return work / self.workers
        elapsed = time.perf_counter() - self.start  # unknown parallelism (Ray): as measured
        return work * elapsed / sum(measured) if measured else 0.0
