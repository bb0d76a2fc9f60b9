"""Judge every predictor by one query protocol on runs it never saw (design §4 metrics).

    python benchmarks/eval_predictors.py --out results/predictors

Task sets: ``id`` (the ID test runs), ``rl_ood`` and ``vit_ood``. The protocol is
`mara_agents.predictors.queries` (fixed seed): capped MAE of remaining batches, accuracy of
"crosses within the budget", and the latency of one call estimating 8 tasks, on one CPU thread.
Prints the relative MAE reduction of FM over WLS and writes ``predictors.csv`` and
``predictors.md``.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import torch

from coreenv.curves import named_task_set
from mara_agents.predictors import HORIZON, PREDICTORS, make_predictor
from mara_agents.predictors.queries import (
    QueryConfig,
    compare_scores,
    make_queries,
    score_predictor,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-sets", nargs="+", default=["id", "rl_ood", "vit_ood"])
    parser.add_argument(
        "--predictors", nargs="+", default=["wls", "fm"], choices=sorted(PREDICTORS)
    )
    parser.add_argument(
        "--per-curve", type=int, default=QueryConfig.per_curve, help="queries per recorded run"
    )
    parser.add_argument("--horizon", type=int, default=HORIZON, help="H, the MAE cap")
    parser.add_argument("--out", type=Path, default=Path("results/predictors"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # latency on one core
    config = QueryConfig(per_curve=args.per_curve)
    results = {}
    for task_set in args.task_sets:
        queries = make_queries(named_task_set(task_set), config)
        for name in args.predictors:
            results[(task_set, name)] = score_predictor(make_predictor(name), queries, args.horizon)
    lines = [
        "| task set | predictor | queries | capped MAE | success accuracy (%) | latency (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for (task_set, name), r in results.items():
        lines.append(
            f"| {task_set} | {name} | {r.queries} | {r.capped_mae:.1f} | "
            f"{100 * r.success_accuracy:.1f} | {r.latency_ms:.2f} |"
        )
    if {"wls", "fm"} <= set(args.predictors):
        lines += [
            "",
            "| task set | MAE reduction FM vs WLS | accuracy gain (points) | latency FM / WLS |",
            "|---|---|---|---|",
        ]
        for task_set in args.task_sets:
            c = compare_scores(results[(task_set, "fm")], results[(task_set, "wls")])
            lines.append(
                f"| {task_set} | {100 * c.mae_reduction:.1f}% | {100 * c.accuracy_gain:+.1f} | "
                f"{c.latency_ratio:.1f}x |"
            )
    report = "\n".join(lines)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "predictors.md").write_text(report + "\n")
    with (args.out / "predictors.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["task_set", "predictor", "queries", "capped_mae", "success_accuracy", "latency_ms"]
        )
        for (task_set, name), r in results.items():
            writer.writerow(
                [task_set, name, r.queries, r.capped_mae, r.success_accuracy, r.latency_ms]
            )


if __name__ == "__main__":
    main()
