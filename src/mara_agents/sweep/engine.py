"""Running a sweep: its config, the plan of jobs, local and Ray runners, resumable rows, progress.

One JSON row per episode is appended to ``<folder>/rows.jsonl`` as soon as it finishes, so an
interruption loses nothing finished and a rerun skips the rows already there; a row counts as
done only if its fingerprint matches what would produce it now.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from tqdm import tqdm

from mara_agents.schedulers.base import acts_in_batches
from mara_agents.sweep.fingerprint import job_fingerprint, method_fingerprint
from mara_agents.sweep.jobs import SEED_GROUP_SIZE, Job, episode_seed, row_key, run_jobs_together
from mara_agents.sweep.methods import DEFAULT_METHODS, SweepInputError, make_scheduler, validate

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
    methods: tuple[str, ...] = DEFAULT_METHODS
    """Method names (`METHODS`) or ``module:Class``."""
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
    """Results folder; None: ``results/<run_name>``."""
    strict: bool = False
    """Raise at the first invalid action instead of idling the node and counting it."""

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
        for name in ("methods", "task_sets", "loads", "seeds"):
            values = getattr(self, name)
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
    def run_name(self) -> str:
        """A folder name that differs between runs of different grids (CleanRL-style)."""
        grid = [self.methods, self.task_sets, self.loads, self.seeds, self.episodes, self.strict]
        digest = hashlib.sha256(json.dumps(grid).encode()).hexdigest()[:8]
        return f"sweep_{len(self.methods)}m_{self.episodes}ep_{digest}"

    @property
    def folder(self) -> Path:
        """Where rows and reports go."""
        return self.out if self.out is not None else Path("results") / self.run_name


def plan(config: SweepConfig) -> list[Job]:
    """Every episode of the sweep, each with the fingerprint of what will produce its row."""
    digests = {method: method_fingerprint(make_scheduler(method)) for method in config.methods}
    jobs = []
    for task_set in config.task_sets:
        for load in config.loads:
            for method in config.methods:
                for base in config.seeds:
                    for i in range(config.episodes):
                        job = Job(method, task_set, load, episode_seed(base, i), config.strict)
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

    Writes ``rows.jsonl`` as episodes finish and ``run.json`` (the grid and its fingerprints, so
    later readers can pick this run's rows). Progress goes to ``stream`` (default stdout).
    """
    stream = stream or sys.stdout
    folder = config.folder
    folder.mkdir(parents=True, exist_ok=True)
    print(f"results go to {folder}/ (rows.jsonl as episodes finish)", file=stream)
    jobs = plan(config)
    settings = {
        "methods": config.methods,
        "task_sets": config.task_sets,
        "loads": config.loads,
        "seeds": config.seeds,
        "episodes": config.episodes,
        "strict": config.strict,
        "fingerprints": sorted({job.fingerprint for job in jobs}),
    }
    (folder / "run.json").write_text(json.dumps(settings, indent=1) + "\n")
    path = folder / "rows.jsonl"
    run_jobs(jobs, config, path, stream)
    wanted = {job.key for job in jobs}
    return [row for row in read_rows(path) if row_key(row) in wanted]


def run_jobs(jobs: list[Job], config: SweepConfig, path: Path, stream: TextIO) -> None:
    """Run the jobs whose rows are missing from ``path``, appending each row as it completes.

    A row of the same episode made by other code (another fingerprint) does not count as done.
    """
    rows = read_rows(path)
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
    units = work_units(todo)
    if config.backend == "ray":
        results = _run_ray(units, config.ray_address)
    else:
        results = _run_local(units, config.workers)
    meter = Progress(todo, config.workers if config.backend == "local" else None, stream)
    with path.open("a") as sink:
        for row in results:
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            meter.update(row)
    meter.close()


def work_units(jobs: list[Job]) -> list[list[Job]]:
    """The calls of `run_jobs_together` that play ``jobs``, the longest first.

    A method with a batched form plays a task set's episodes together (up to `BATCH_LANES`), so
    one policy pass and one predictor cache serve them; any other plays one episode per call,
    with a fresh scheduler each, as it always has.
    """
    batched = {m for m in {job.method for job in jobs} if acts_in_batches(make_scheduler(m))}
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


def _run_local(units: list[list[Job]], workers: int) -> Iterator[dict]:
    if workers <= 1:
        for unit in units:
            yield from run_jobs_together(unit)
        return
    pool = ProcessPoolExecutor(workers)
    try:
        futures = [pool.submit(run_jobs_together, unit) for unit in units]
        for future in as_completed(futures):
            yield from future.result()
    finally:  # on an error or Ctrl-C, stop at once instead of finishing the queue
        pool.shutdown(wait=True, cancel_futures=True)


def _run_ray(units: list[list[Job]], address: str | None) -> Iterator[dict]:
    try:
        import ray
    except ImportError as e:
        raise SystemExit("the ray backend needs Ray: pip install 'coreenv[ray]'") from e
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_jobs_together)
    pending = [remote.remote(unit) for unit in units]
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
