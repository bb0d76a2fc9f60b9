"""Sweep the arrival rate p and print the completion-rate table for every method (SPEC §5).

    python benchmarks/sweep_load.py --quick
    python benchmarks/sweep_load.py --loads 0.04 0.05 0.06 0.07 --methods fifo edf oracle \
        --episodes 30 --workers 2 --out results/sweep

Methods are names (``fifo edf random oracle``) or any scheduler importable as ``module:Class``
(constructed without arguments). One JSON row per episode is appended to ``OUT/rows.jsonl`` as it
finishes; a rerun with the same ``--out`` skips the episodes already there.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import coreenv
from mara_agents import run_episode
from mara_agents.schedulers import EDF, FIFO, Oracle, RandomScheduler, Scheduler

METHODS = {"fifo": FIFO, "edf": EDF, "random": RandomScheduler, "oracle": Oracle}


@dataclass(frozen=True)
class Job:
    """One episode of the sweep."""

    method: str
    task_set: str
    load: float
    seed: int

    @property
    def key(self) -> tuple:
        """Identifies the episode among the rows already written."""
        return (self.method, self.task_set, self.load, self.seed)


def make_scheduler(method: str) -> Scheduler:
    """A scheduler from a method name or ``module:Class``."""
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
    """Play one episode; the row carries the job and every SPEC §2 metric."""
    env = coreenv.parallel_env(task_set=job.task_set, arrival_prob=job.load)
    start = time.perf_counter()
    metrics = run_episode(make_scheduler(job.method), env, job.seed)
    return {
        "method": job.method,
        "task_set": job.task_set,
        "load": job.load,
        "seed": job.seed,
        **metrics,
        "seconds": round(time.perf_counter() - start, 3),
    }


def read_rows(path: Path) -> list[dict]:
    """Rows already written (a half-written last line from an interruption is ignored)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def run_jobs(jobs: list[Job], workers: int, out: Path) -> None:
    """Run the jobs not in ``out`` yet, appending each row as soon as it is done."""
    done = {(r["method"], r["task_set"], r["load"], r["seed"]) for r in read_rows(out)}
    todo = [job for job in jobs if job.key not in done]
    print(f"{len(jobs) - len(todo)} of {len(jobs)} episodes already done; running {len(todo)}.")
    with out.open("a") as sink:

        def write(row: dict) -> None:
            sink.write(json.dumps(row) + "\n")
            sink.flush()

        if workers <= 1:
            for i, job in enumerate(todo, 1):
                write(run_job(job))
                progress(i, len(todo))
        else:
            with ProcessPoolExecutor(workers) as pool:
                futures = [pool.submit(run_job, job) for job in todo]
                for i, future in enumerate(as_completed(futures), 1):
                    write(future.result())
                    progress(i, len(todo))
    print()


def progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    sys.stdout.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} episodes")
    sys.stdout.flush()


def table(rows: list[dict], methods: list[str], loads: list[float], task_set: str) -> str:
    """Markdown table: completion rate (%) mean ± std over episodes, one row per method."""
    cells = defaultdict(list)
    for r in rows:
        if r["task_set"] == task_set:
            cells[(r["method"], r["load"])].append(100 * r["completion_rate"])
    header = "| method | " + " | ".join(f"p = {p:g}" for p in loads) + " |"
    lines = [
        f"Completion rate (%) on task set `{task_set}`",
        "",
        header,
        "|---" * (len(loads) + 1) + "|",
    ]
    for method in methods:
        values = [cells.get((method, p), []) for p in loads]
        text = [f"{np.mean(v):.1f} ± {np.std(v):.1f} (n={len(v)})" if v else "–" for v in values]
        lines.append(f"| {method} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=float, nargs="+", default=[0.04, 0.05, 0.06, 0.07])
    parser.add_argument("--task-sets", nargs="+", default=["synthetic"])
    parser.add_argument("--methods", nargs="+", default=["fifo", "edf", "random", "oracle"])
    parser.add_argument("--episodes", type=int, default=20, help="episodes per cell")
    parser.add_argument("--seed", type=int, default=10_000, help="first evaluation seed")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("results/sweep"))
    parser.add_argument("--quick", action="store_true", help="a smoke run: 6 episodes per cell")
    args = parser.parse_args(argv)
    if args.quick:
        args.episodes = 6
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    for method in args.methods:
        make_scheduler(method)  # fail before any work on an unknown method
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [
        Job(method, task_set, load, args.seed + i)
        for task_set in args.task_sets
        for load in args.loads
        for method in args.methods
        for i in range(args.episodes)
    ]
    rows_path = args.out / "rows.jsonl"
    run_jobs(jobs, args.workers, rows_path)
    rows = read_rows(rows_path)
    report = "\n\n".join(table(rows, args.methods, args.loads, ts) for ts in args.task_sets)
    (args.out / "table.md").write_text(report + "\n")
    print(report)


if __name__ == "__main__":
    main()
