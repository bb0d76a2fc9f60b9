"""The paper's component and shaping ablations as one table, at the training load.

    python benchmarks/ablations.py --episodes 100 --out results/ablations

| row | what it isolates |
|---|---|
| MARA (MAT + FM, shaped) | the full system |
| MARA-WLS (MAT + WLS) | the predictor inside the learned allocator |
| LARA-FM (LARA + FM) | the allocator, with the better predictor |
| LARA (LARA + WLS) | the baseline |
| MARA unshaped (β = 0) | the potential shaping |

Episodes are the sweep's (`benchmarks/sweep_load.py`, same rows file format, resumable).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import sweep_load
from mara_agents.sweep import row_key

ROWS = [
    ("mara", "MARA (MAT + FM)"),
    ("mara_wls", "MARA-WLS (MAT + WLS)"),
    ("lara_fm", "LARA-FM (LARA + FM)"),
    ("lara", "LARA (LARA + WLS)"),
    ("mara_noshape", "MARA unshaped (β = 0)"),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-sets", nargs="+", default=["id", "rl_ood", "vit_ood"])
    parser.add_argument("--load", type=float, default=0.04)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--methods", nargs="+", default=[m for m, _ in ROWS])
    parser.add_argument("--out", type=Path, default=Path("results/ablations"))
    args = parser.parse_args(argv)
    sweep = sweep_load.parse_args(
        [
            "--loads",
            str(args.load),
            "--task-sets",
            *args.task_sets,
            "--methods",
            *args.methods,
            "--episodes",
            str(args.episodes),
            "--workers",
            str(args.workers),
            "--out",
            str(args.out),
        ]
    )
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "rows.jsonl"
    jobs = sweep_load.plan(sweep)
    sweep_load.run(jobs, sweep, path)
    wanted = {job.key for job in jobs}
    data = sweep_load.cells([r for r in sweep_load.read_rows(path) if row_key(r) in wanted])
    names = dict(ROWS)
    lines = [
        f"Ablations at p = {args.load:g}: completion rate (%), mean ± standard error "
        f"({args.episodes} episodes per cell)",
        "",
        "| method | " + " | ".join(args.task_sets) + " | mean |",
        "|---" * (len(args.task_sets) + 2) + "|",
    ]
    for method in args.methods:
        rates = [data[(t, args.load, method)]["completion_rate"] for t in args.task_sets]
        cells = [f"{100 * r.mean():.1f} ± {100 * r.std() / np.sqrt(len(r)):.1f}" for r in rates]
        mean = 100 * np.mean([r.mean() for r in rates])
        lines.append(f"| {names.get(method, method)} | " + " | ".join(cells) + f" | {mean:.1f} |")
    report = "\n".join(lines)
    (args.out / "ablations.md").write_text(report + "\n")
    print(report)


if __name__ == "__main__":
    main()
