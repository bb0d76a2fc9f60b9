"""Sweep the arrival rate p and report every method's completion rate, paper-style (SPEC §5).

    python benchmarks/sweep_load.py --quick                          # the README's main job
    python benchmarks/sweep_load.py --episodes 100 --out results/sweep   # the full sweep
    python benchmarks/sweep_load.py --methods fifo lara my_pkg.sched:MyScheduler
    python benchmarks/sweep_load.py --backend ray --ray-address auto     # on a Ray cluster

One JSON row per episode is appended to ``OUT/rows.jsonl`` as soon as it finishes, so Ctrl-C
loses nothing finished and a rerun with the same ``--out`` skips the rows already there. At the
end the tables are printed and saved (``table.md``, ``cells.csv``) with a plot (``completion.png``).
Episode seeds come from ``mara_agents.sweep.episode_seed``: disjoint from any training seed.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from mara_agents.sweep import DEFAULT_METHODS, Job, episode_seed, make_scheduler, run_job

CLASSIC = ["fifo", "edf", "lara"]
OPERATIONAL = ["full_queue_fraction", "waiting_population", "steps_to_ready", "utilisation"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=float, nargs="+", default=[0.04, 0.05, 0.06, 0.07])
    parser.add_argument("--task-sets", nargs="+", default=["id", "rl_ood", "vit_ood"])
    parser.add_argument("--methods", nargs="+", default=DEFAULT_METHODS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="seed groups")
    parser.add_argument("--episodes", type=int, default=100, help="episodes per seed and cell")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", choices=["local", "ray"], default="local")
    parser.add_argument("--ray-address", default=None, help="ray.init address; default: local")
    parser.add_argument("--out", type=Path, default=Path("results/sweep"))
    parser.add_argument("--quick", action="store_true", help="4 episodes per cell: a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.episodes = 4
    return args


def plan(args: argparse.Namespace) -> list[Job]:
    return [
        Job(method, task_set, load, episode_seed(base, i))
        for task_set in args.task_sets
        for load in args.loads
        for method in args.methods
        for base in args.seeds
        for i in range(args.episodes)
    ]


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
    """Run the jobs whose rows are missing, appending each row as it completes."""
    done = {(r["method"], r["task_set"], r["load"], r["seed"]) for r in read_rows(path)}
    todo = [job for job in jobs if job.key not in done]
    print(
        f"{len(jobs) - len(todo)} of {len(jobs)} episodes already done; running {len(todo)} "
        f"on backend {args.backend}."
    )
    rows = (
        run_ray(todo, args.ray_address) if args.backend == "ray" else run_local(todo, args.workers)
    )
    start = shown = time.perf_counter()
    with path.open("a") as sink:
        for count, row in enumerate(rows, 1):
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            now = time.perf_counter()
            if now - shown > 0.5 or count == len(todo):  # redraw twice a second at most
                progress(count, len(todo), now - start)
                shown = now
    print()


def progress(done: int, total: int, elapsed: float) -> None:
    """A one-line progress bar with the time left."""
    width = 30
    filled = width * done // max(total, 1)
    left = elapsed / done * (total - done)
    sys.stdout.write(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} episodes, "
        f"{elapsed:.0f}s elapsed, ~{left:.0f}s left "
    )
    sys.stdout.flush()


def cells(rows: list[dict]) -> dict[tuple, dict[str, np.ndarray]]:
    """Per (task set, load, method): arrays of every metric over the episodes."""
    grouped = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for key, value in r.items():
            if isinstance(value, (int, float)) and key not in ("load", "seed"):
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
    """Operational metrics per method, averaged over every task set and load."""
    lines = [
        "Operational metrics (mean over task sets and loads)",
        "",
        "| method | " + " | ".join(OPERATIONAL) + " |",
        "|---" * (len(OPERATIONAL) + 1) + "|",
    ]
    for method in args.methods:
        values = []
        for metric in OPERATIONAL:
            means = [
                np.nanmean(v[metric])
                for (_, _, m), v in data.items()
                if m == method and not np.all(np.isnan(v[metric]))
            ]
            values.append(f"{np.mean(means):.3f}" if means else "–")
        lines.append(f"| {method} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def save_cells(data: dict, path: Path) -> None:
    metrics = ["completion_rate", "feasibility_bound", *OPERATIONAL, "arrivals", "seconds"]
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
    for method in args.methods:
        make_scheduler(method)  # fail before any work on an unknown method
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path = args.out / "rows.jsonl"
    run(plan(args), args, rows_path)
    wanted = {job.key for job in plan(args)}
    rows = [
        r
        for r in read_rows(rows_path)
        if (r["method"], r["task_set"], r["load"], r["seed"]) in wanted
    ]
    data = cells(rows)
    tables = [completion_tables(data, args), margin_table(rows, args)]
    report = "\n\n".join(t for t in [*tables, operational_table(data, args)] if t)
    (args.out / "table.md").write_text(report + "\n")
    save_cells(data, args.out / "cells.csv")
    plot(data, args, args.out / "completion.png")
    print(report)
    print(
        f"\nsaved {args.out / 'table.md'}, {args.out / 'cells.csv'}, {args.out / 'completion.png'}"
    )


if __name__ == "__main__":
    main()
