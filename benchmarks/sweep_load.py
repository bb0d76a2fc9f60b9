"""Sweep the arrival rate p and report every method's completion rate, paper-style (design §5).

    python benchmarks/sweep_load.py --quick                          # the README's main job
    python benchmarks/sweep_load.py --episodes 100 --out results/sweep   # the full sweep
    python benchmarks/sweep_load.py --methods fifo lara my_pkg.sched:MyScheduler
    python benchmarks/sweep_load.py --backend ray --ray-address auto     # on a Ray cluster

One JSON row per episode is appended to ``OUT/rows.jsonl`` as soon as it finishes, so Ctrl-C
loses nothing finished and a rerun with the same ``--out`` skips the rows already there. Each row
carries a fingerprint of what produced it (the scheduler's code and weights, the environment
config, the package version): a rerun after an edit redoes the episodes instead of reusing them.
At the end the tables are printed and saved (``table.md``, ``cells.csv``) with a plot
(``completion.png``) and the run's settings and fingerprints (``run.json``); invalid actions are
counted per method, with a warning when any were made.
Episode seeds come from ``mara_agents.sweep.episode_seed``: disjoint from any training seed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from coreenv import InvalidActionError
from coreenv.curves import TASK_SETS
from mara_agents.sweep import (
    DEFAULT_METHODS,
    METHODS,
    Job,
    SweepInputError,
    episode_seed,
    job_fingerprint,
    make_scheduler,
    method_fingerprint,
    row_key,
    run_job,
    validate,
)

CLASSIC = ["fifo", "edf", "lara"]
OPERATIONAL = ["full_queue_fraction", "waiting_population", "steps_to_ready", "utilisation"]
QUICK_EPISODES = 4


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse and validate every option; a bad one exits with status 2 and one line saying why."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--loads",
        type=float,
        nargs="+",
        default=[0.04, 0.05, 0.06, 0.07],
        help="arrival probabilities p to sweep, each in (0, 1]",
    )
    parser.add_argument(
        "--task-sets",
        nargs="+",
        default=["id", "rl_ood", "vit_ood"],
        help=f"task sets: names {sorted(TASK_SETS)} or paths to bank .npz files",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        default=DEFAULT_METHODS,
        help=f"schedulers: names {sorted(METHODS)} or module:Class (from the current directory "
        "or the path)",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0],
        help="seed groups; episode i of group g has seed 1,000,000 + 10,000 g + i",
    )
    parser.add_argument("--episodes", type=int, default=100, help="episodes per seed and cell")
    parser.add_argument("--workers", type=int, default=2, help="local worker processes")
    parser.add_argument(
        "--backend", choices=["local", "ray"], default="local", help="where episodes run"
    )
    parser.add_argument(
        "--ray-address", default=None, help="ray.init address; default: a local Ray"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="results folder; default results/<run name>, the run name made from the settings",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first invalid or conflicting action (the 'raise' policy) instead of "
        "idling the node and counting it",
    )
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_EPISODES} episodes per cell: a smoke run"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.episodes = QUICK_EPISODES
    if args.episodes < 1 or args.workers < 1 or min(args.seeds) < 0:
        parser.error("--episodes and --workers must be >= 1 and --seeds >= 0.")
    try:
        validate(args.methods, args.task_sets, args.loads)
    except SweepInputError as e:
        parser.error(str(e))
    if args.out is None:
        args.out = Path("results") / run_name(args)
    return args


def run_name(args: argparse.Namespace) -> str:
    """A folder name that differs between runs of different settings (CleanRL-style run names)."""
    settings = [args.methods, args.task_sets, args.loads, args.seeds, args.episodes, args.strict]
    digest = hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:8]
    return f"sweep_{len(args.methods)}m_{args.episodes}ep_{digest}"


def plan(args: argparse.Namespace) -> list[Job]:
    """Every episode of the sweep, each with the fingerprint of what will produce its row."""
    digests = {method: method_fingerprint(make_scheduler(method)) for method in args.methods}
    jobs = []
    for task_set in args.task_sets:
        for load in args.loads:
            for method in args.methods:
                for base in args.seeds:
                    for i in range(args.episodes):
                        job = Job(method, task_set, load, episode_seed(base, i), args.strict)
                        fingerprint = job_fingerprint(digests[method], job)
                        jobs.append(Job(**{**job.__dict__, "fingerprint": fingerprint}))
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


def run_local(jobs: list[Job], workers: int) -> Iterator[dict]:
    if workers <= 1:
        yield from map(run_job, jobs)
        return
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(run_job, job) for job in jobs]
        for future in as_completed(futures):
            yield future.result()


def run_ray(jobs: list[Job], address: str | None) -> Iterator[dict]:
    try:
        import ray
    except ImportError as e:
        raise SystemExit("--backend ray needs Ray: pip install 'coreenv[ray]'") from e
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_job)
    pending = [remote.remote(job) for job in jobs]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield ray.get(done[0])


def run(jobs: list[Job], args: argparse.Namespace, path: Path) -> None:
    """Run the jobs whose rows are missing, appending each row as it completes.

    A row of the same episode made by other code (another fingerprint) does not count as done.
    """
    rows = read_rows(path)
    done = {row_key(r) for r in rows}
    todo = [job for job in jobs if job.key not in done]
    episodes = {job.key[:4] for job in todo}
    stale = sum(1 for r in rows if row_key(r)[:4] in episodes)  # same episode, other code
    print(
        f"{len(jobs) - len(todo)} of {len(jobs)} episodes already done; running {len(todo)} "
        f"on backend {args.backend}."
    )
    if stale:
        print(
            f"{stale} earlier rows of these episodes were made by other code or settings "
            "(scheduler source, checkpoint, environment config or package version changed): "
            "they are ignored and the episodes redone."
        )
    results = (
        run_ray(todo, args.ray_address) if args.backend == "ray" else run_local(todo, args.workers)
    )
    meter = Progress(todo, args.workers if args.backend == "local" else 1)
    with path.open("a") as sink:
        for row in results:
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            meter.update(row)
    print()


class Progress:
    """A one-line progress bar whose time left weights each remaining episode by its method's cost.

    Costs are the mean measured seconds per episode of each method so far (the mean of all
    methods for one not yet measured), so a slow method left for last is not underestimated.
    """

    def __init__(self, jobs: list[Job], workers: int) -> None:
        self.left = Counter(job.method for job in jobs)
        self.total = len(jobs)
        self.workers = workers
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.start = self.shown = time.perf_counter()
        self.done = 0

    def update(self, row: dict) -> None:
        """Count a finished row; redraw at most twice a second."""
        self.done += 1
        self.left[row["method"]] -= 1
        self.seconds[row["method"]].append(row["seconds"])
        now = time.perf_counter()
        if now - self.shown > 0.5 or self.done == self.total:
            self.shown = now
            self.draw(now - self.start)

    def time_left(self) -> float:
        """Estimated seconds until every remaining episode is done."""
        measured = [s for values in self.seconds.values() for s in values]
        default = float(np.mean(measured)) if measured else 0.0
        cost = {m: float(np.mean(v)) for m, v in self.seconds.items()}
        work = sum(n * cost.get(method, default) for method, n in self.left.items())
        return work / self.workers

    def draw(self, elapsed: float) -> None:
        """Redraw the bar in place."""
        width = 30
        filled = width * self.done // max(self.total, 1)
        sys.stdout.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} episodes, "
            f"{elapsed:.0f}s elapsed, ~{self.time_left():.0f}s left "
        )
        sys.stdout.flush()


def cells(rows: list[dict]) -> dict[tuple, dict[str, np.ndarray]]:
    """Per (task set, load, method): arrays of every metric over the episodes."""
    grouped = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for key, value in r.items():
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            if numeric and key not in ("load", "seed"):
                grouped[(r["task_set"], r["load"], r["method"])][key].append(value)
    return {
        cell: {k: np.array(v, float) for k, v in metrics.items()}
        for cell, metrics in grouped.items()
    }


def completion_tables(data: dict, args: argparse.Namespace) -> str:
    """Mean ± std completion rate (%) per method and load, one table per task set.

    The last column is the margin over LARA (points, mean over loads) where LARA was run.
    """
    parts = []
    for task_set in args.task_sets:
        lines = [
            f"**{task_set}**: completion rate (%), mean ± std over episodes",
            "",
            "| method | " + " | ".join(f"p = {p:g}" for p in args.loads) + " | mean | vs LARA |",
            "|---" * (len(args.loads) + 3) + "|",
        ]
        lara = [data.get((task_set, p, "lara"), {}).get("completion_rate") for p in args.loads]
        for method in args.methods:
            rates = [data.get((task_set, p, method), {}).get("completion_rate") for p in args.loads]
            text = [
                f"{100 * r.mean():.1f} ± {100 * r.std():.1f}" if r is not None else "–"
                for r in rates
            ]
            means = [r.mean() for r in rates if r is not None]
            overall = f"{100 * np.mean(means):.1f}" if means else "–"
            margin = "–"
            if all(r is not None for r in rates + lara):
                margin = (
                    f"{100 * np.mean([r.mean() - lr.mean() for r, lr in zip(rates, lara)]):+.1f}"
                )
            lines.append(f"| {method} | " + " | ".join(text) + f" | {overall} | {margin} |")
        n = min((len(v["completion_rate"]) for v in data.values()), default=0)
        lines.append(f"\n(at least {n} episodes per cell)")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def margin_table(rows: list[dict], args: argparse.Namespace) -> str:
    """Each learned method's margin over the strongest classic baseline, and its share of Oracle.

    Per cell: points over the best of FIFO, EDF and LARA there (mean ± standard error of the
    per-episode difference, paired by seed), then completion as a percentage of Oracle's.
    """
    rates = defaultdict(dict)
    for r in rows:
        rates[(r["method"], r["task_set"], r["load"])][r["seed"]] = r["completion_rate"]
    learned = [m for m in args.methods if m not in [*CLASSIC, "random", "oracle"]]
    lines = [
        "Margin over the best of FIFO, EDF and LARA (points, paired by seed) and share of Oracle",
        "",
        "| method | task set | " + " | ".join(f"p = {p:g}" for p in args.loads) + " |",
        "|---" * (len(args.loads) + 2) + "|",
    ]
    for method in learned:
        for task_set in args.task_sets:
            text = []
            for p in args.loads:
                mine, oracle = rates[(method, task_set, p)], rates[("oracle", task_set, p)]
                classic = [rates[(c, task_set, p)] for c in CLASSIC]
                seeds = sorted(set(mine).intersection(oracle, *classic))
                if not seeds:
                    text.append("–")
                    continue
                best = max(classic, key=lambda c: np.mean([c[s] for s in seeds]))
                diff = 100 * np.array([mine[s] - best[s] for s in seeds])
                share = np.mean([mine[s] for s in seeds]) / np.mean([oracle[s] for s in seeds])
                se = diff.std(ddof=1) / np.sqrt(len(seeds)) if len(seeds) > 1 else float("nan")
                text.append(f"{diff.mean():+.1f} ± {se:.1f} ({100 * share:.0f}%)")
            lines.append(f"| {method} | {task_set} | " + " | ".join(text) + " |")
    return "\n".join(lines) if learned else ""


def operational_table(data: dict, args: argparse.Namespace) -> str:
    """Operational metrics and invalid actions per method, averaged over every task set and load.

    ``invalid actions`` are node actions per episode that named an empty slot, a slot another node
    took, or no slot at all: the environment idled those nodes (``conflicts`` in the rows).
    """
    columns = [*OPERATIONAL, "conflicts"]
    lines = [
        "Operational metrics (mean over task sets and loads)",
        "",
        "| method | " + " | ".join(OPERATIONAL) + " | invalid actions / episode |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for method in args.methods:
        values = []
        for metric in columns:
            means = [
                np.nanmean(v[metric])
                for (_, _, m), v in data.items()
                if m == method and not np.all(np.isnan(v[metric]))
            ]
            values.append(f"{np.mean(means):.3f}" if means else "–")
        lines.append(f"| {method} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def invalid_action_warnings(data: dict, args: argparse.Namespace) -> list[str]:
    """One warning per method whose nodes made invalid actions (each was idled, not carried out)."""
    warnings = []
    for method in args.methods:
        counts = np.concatenate([v["conflicts"] for (_, _, m), v in data.items() if m == method])
        if counts.size and counts.sum() > 0:
            warnings.append(
                f"WARNING: {method} made {counts.mean():.1f} invalid actions per episode "
                f"(in {np.count_nonzero(counts)} of {counts.size} episodes); the environment "
                "idled those nodes, so its results understate what it meant to do. Rerun with "
                "--strict to stop at the first one."
            )
    return warnings


def save_cells(data: dict, path: Path) -> None:
    metrics = ["completion_rate", "feasibility_bound", *OPERATIONAL, "conflicts", "arrivals"]
    metrics.append("seconds")
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "task_set",
                "load",
                "method",
                "episodes",
                *(f"{m}_{s}" for m in metrics for s in ("mean", "std", "se")),
            ]
        )
        for (task_set, load, method), values in sorted(data.items()):
            stats = []
            for m in metrics:
                v = values[m][~np.isnan(values[m])]
                stats += (
                    [v.mean(), v.std(), v.std() / np.sqrt(max(len(v), 1))] if len(v) else [""] * 3
                )
            writer.writerow([task_set, load, method, len(values["completion_rate"]), *stats])


def save_run(args: argparse.Namespace, jobs: list[Job], path: Path) -> None:
    """What this run consisted of, so that later readers of rows.jsonl can pick its rows."""
    settings = {
        "methods": args.methods,
        "task_sets": args.task_sets,
        "loads": args.loads,
        "seeds": args.seeds,
        "episodes": args.episodes,
        "strict": args.strict,
        "fingerprints": sorted({job.fingerprint for job in jobs}),
    }
    path.write_text(json.dumps(settings, indent=1) + "\n")


def plot(data: dict, args: argparse.Namespace, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, axes = plt.subplots(
        1, len(args.task_sets), figsize=(4.5 * len(args.task_sets), 3.5), squeeze=False, sharey=True
    )
    for ax, task_set in zip(axes[0], args.task_sets):
        for method in args.methods:
            points = [
                (p, data[(task_set, p, method)]["completion_rate"])
                for p in args.loads
                if (task_set, p, method) in data
            ]
            if points:
                loads, rates = zip(*points)
                means = [100 * r.mean() for r in rates]
                errors = [100 * r.std() / np.sqrt(len(r)) for r in rates]
                ax.errorbar(loads, means, yerr=errors, marker="o", capsize=3, label=method)
        ax.set_title(task_set)
        ax.set_xlabel("arrival rate p")
    axes[0, 0].set_ylabel("completion rate (%)")
    axes[0, -1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.out / "rows.jsonl"
    print(f"results go to {args.out}/ (rows.jsonl as episodes finish)")
    jobs = plan(args)
    try:
        run(jobs, args, rows_path)
    except InvalidActionError as e:
        raise SystemExit(f"\n--strict: {e}") from e
    wanted = {job.key for job in jobs}
    rows = [r for r in read_rows(rows_path) if row_key(r) in wanted]
    save_run(args, jobs, args.out / "run.json")
    data = cells(rows)
    tables = [completion_tables(data, args), margin_table(rows, args)]
    report = "\n\n".join(t for t in [*tables, operational_table(data, args)] if t)
    warnings = invalid_action_warnings(data, args)
    (args.out / "table.md").write_text("\n\n".join([report, *warnings]) + "\n")
    save_cells(data, args.out / "cells.csv")
    plot(data, args, args.out / "completion.png")
    print(report)
    for warning in warnings:
        print("\n" + warning)
    print(f"\nresults in {args.out}/: table.md, cells.csv, completion.png, rows.jsonl, run.json")


if __name__ == "__main__":
    main()
