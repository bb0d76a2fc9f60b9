"""Running a sweep: the plan of jobs, local and Ray runners, resumable rows.

With an output folder, one JSON row per episode is appended to ``rows.jsonl`` as soon as it
finishes, so an interruption loses nothing finished and a rerun skips the rows already there; a
row counts as done only if its fingerprint matches what would produce it now.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import platform
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import coreenv
from mara_agents.schedulers.base import acts_in_batches, observes_estimates
from mara_agents.sweep.config import SweepConfig
from mara_agents.sweep.fingerprint import job_fingerprint, method_fingerprint
from mara_agents.sweep.jobs import Job, episode_seed, row_key, run_jobs_together
from mara_agents.sweep.methods import SweepInputError
from mara_agents.sweep.progress import Progress

__all__ = ["BATCH_LANES", "plan", "provenance", "read_rows", "run_jobs", "run_sweep", "work_units"]

BATCH_LANES = 256
"""Most episodes a batched method plays in lockstep in one worker call."""


def plan(config: SweepConfig) -> list[Job]:
    """Every episode of the sweep, each with the fingerprint of what will produce its row."""
    digests = {name: method_fingerprint(make()) for name, make in config.factories.items()}
    env = tuple(sorted(config.env.items()))
    jobs = []
    for task_set in config.task_sets:
        for arrival_prob in config.arrival_prob:
            for method in config.names:
                for base in config.seeds:
                    for i in range(config.episodes):
                        seed = episode_seed(base, i)
                        job = Job(method, task_set, arrival_prob, seed, config.strict, env=env)
                        jobs.append(replace(job, fingerprint=job_fingerprint(digests[method], job)))
    return jobs


def read_rows(path: Path) -> list[dict]:
    """Rows already written; a line cut short by an interruption is ignored (and redone)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "load" in row:  # a row of 0.1.0, before the arrival probability had one name
            row["arrival_prob"] = row.pop("load")
        rows.append(row)
    return rows


def run_sweep(config: SweepConfig, stream: TextIO | None = None) -> list[dict]:
    """Run the sweep's missing episodes and return the rows of every one of its episodes.

    With ``config.out``, writes ``rows.jsonl`` as episodes finish and ``run.json`` (the grid, its
    fingerprints, so later readers can pick this run's rows, and `provenance`), and skips
    episodes already there; without, plays every episode and writes nothing. Progress goes to ``stream`` (default
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
        "arrival_prob": config.arrival_prob,
        "seeds": config.seeds,
        "episodes": config.episodes,
        "strict": config.strict,
        "env": dict(config.env),
        "fingerprints": sorted({job.fingerprint for job in jobs}),
        **provenance(),
    }
    (folder / "run.json").write_text(json.dumps(settings, indent=1) + "\n")
    path = folder / "rows.jsonl"
    run_jobs(jobs, config, path, stream)
    wanted = {job.key for job in jobs}
    return [row for row in read_rows(path) if row_key(row) in wanted]


def provenance() -> dict[str, Any]:
    """What made a run, for its ``run.json``: the package version, the command line, the machine."""
    return {
        "coreenv": coreenv.__version__,
        "command": " ".join(sys.argv),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "processor": platform.machine(),
            "cpus": os.cpu_count(),
        },
    }


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
    """The calls of `run_jobs_together` that play ``jobs``, the costliest first.

    A method with a batched form plays a task set's episodes of one cluster (``Job.env``)
    together (up to `BATCH_LANES`), so
    one policy pass and one predictor cache serve them; any other plays one episode per call,
    with a fresh scheduler each (``factories``, by method name), as it always has. Among the
    batched units, those of methods whose observation carries a predictor's estimates (a
    predictor call every step: the learned policies) start first, then the longest, so that no
    worker is left with a long unit at the end while the others idle; one-episode units follow.
    """
    schedulers = {m: factories[m]() for m in {job.method for job in jobs}}
    batched = {m for m, scheduler in schedulers.items() if acts_in_batches(scheduler)}
    observing = {m for m, scheduler in schedulers.items() if observes_estimates(scheduler)}
    groups: dict[tuple, list[Job]] = defaultdict(list)
    singles = []
    for job in jobs:
        if job.method in batched:
            groups[job.method, job.task_set, job.env].append(job)
        else:
            singles.append([job])
    together = [
        group[start : start + BATCH_LANES]
        for group in groups.values()
        for start in range(0, len(group), BATCH_LANES)
    ]
    return (
        sorted(together, key=lambda unit: (unit[0].method in observing, len(unit)), reverse=True)
        + singles
    )


def _run_local(
    units: list[list[Job]], factories: Mapping[str, Callable[[], Any]], workers: int
) -> Iterator[dict]:
    if workers <= 1:
        for unit in units:
            yield from run_jobs_together(unit, factories[unit[0].method])
        return
    _check_sendable(units, factories)
    pool = ProcessPoolExecutor(workers)
    try:
        with _one_torch_thread():  # the workers are forked as the jobs are submitted
            futures = [
                pool.submit(run_jobs_together, unit, factories[unit[0].method]) for unit in units
            ]
        for future in as_completed(futures):
            yield from future.result()
    finally:  # on an error or Ctrl-C, stop at once instead of finishing the queue
        pool.shutdown(wait=True, cancel_futures=True)


def _check_sendable(units: list[list[Job]], factories: Mapping[str, Callable[[], Any]]) -> None:
    """Raise SweepInputError naming a method whose factory cannot reach a worker process.

    A factory is pickled to be sent; one that cannot be (a function defined inside another, a
    lambda) would otherwise leave the pool waiting for ever.
    """
    for method in dict.fromkeys(unit[0].method for unit in units):
        try:
            pickle.dumps(factories[method])
        except Exception as error:
            raise SweepInputError(
                f"method {method!r} cannot be sent to a worker process ({error}); define its "
                "factory at a module's top level (or as a functools.partial of one), or run "
                "with workers=1."
            ) from error


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Torch on one thread while worker processes are forked, then as it was.

    A worker forked while torch runs a pool of threads (the methods' checks used it) can hang in
    its first torch call; on one thread it does not, and one per worker is what the workers
    should use anyway.
    """
    torch = sys.modules.get("torch")  # never imported here: a sweep without torch stays so
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


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
