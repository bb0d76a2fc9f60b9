"""Tune LARA on the ID training runs only: its WLS settings, then its exploration length.

    python studies/tuning/tune_lara.py

1. WLS: capped MAE and success accuracy over a grid of discount × ridge, by the predictor query
   protocol (`mara_agents.predictor_eval.queries`) on the ``id_train`` runs (never the test runs).
2. Exploration: LARA's completion rate for several exploration lengths at the default regime,
   on ``id_train`` with training seeds (below the evaluation seeds).
3. Diagnosis: FIFO, EDF, LARA with WLS and LARA with the true remaining demand (a clairvoyant
   predictor), which separates the allocation rule from the estimation error.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from coreenv.curves import named_task_set
from coreenv_lab.diagnostics import ClairvoyantPredictor
from mara_agents import evaluate
from mara_agents.predictor_eval.queries import QueryConfig, make_queries, score_predictor
from mara_agents.predictors import WLSConfig, WLSPredictor
from mara_agents.schedulers import EDF, FIFO, LARA, Oracle, Scheduler


def print_rates(
    pool: ProcessPoolExecutor, schedulers: dict[str, Scheduler], args: argparse.Namespace
) -> None:
    """Evaluate each scheduler on the same episodes in the pool; one table row each, in order."""
    runs = {
        label: pool.submit(evaluate, scheduler, args.episodes, args.seed, task_set=args.task_set)
        for label, scheduler in schedulers.items()
    }
    for label, run in runs.items():
        result = run.result()
        mean, std = result["completion_rate"], result["completion_rate_std"]
        print(f"| {label} | {100 * mean:.1f} | {100 * std:.1f} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-set", default="id_train")
    parser.add_argument(
        "--discounts", type=float, nargs="+", default=[0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 1.0]
    )
    parser.add_argument("--ridges", type=float, nargs="+", default=[0.0, 1e-3, 1e-1])
    parser.add_argument("--explore", type=int, nargs="+", default=[5, 10, 20, 40, 80])
    parser.add_argument("--per-curve", type=int, default=4, help="WLS queries per recorded run")
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0, help="training seeds: keep below 1e6")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)

    queries = make_queries(named_task_set(args.task_set), QueryConfig(per_curve=args.per_curve))
    print(f"WLS on {len(queries)} {args.task_set} queries (H = {WLSConfig().horizon})\n")
    print("| discount | ridge | capped MAE | success accuracy (%) |\n|---|---|---|---|")
    for discount in args.discounts:
        for ridge in args.ridges:
            config = WLSConfig(discount=discount, ridge=ridge)
            r = score_predictor(WLSPredictor(config), queries, config.horizon)
            print(
                f"| {discount} | {ridge} | {r.capped_mae:.1f} | {100 * r.success_accuracy:.1f} |",
                flush=True,
            )

    print(f"\nLARA (default WLS) on {args.task_set}, {args.episodes} training episodes each\n")
    print("| explore (batches) | completion rate (%) | std |\n|---|---|---|")
    with ProcessPoolExecutor(args.workers) as pool:
        print_rates(pool, {str(e): LARA(explore=e) for e in args.explore}, args)

        print(f"\nDiagnosis on {args.task_set}: allocation rule vs estimation error\n")
        print("| scheduler | completion rate (%) | std |\n|---|---|---|")
        truth = ClairvoyantPredictor(named_task_set(args.task_set))
        diagnosis = {
            "FIFO": FIFO(),
            "EDF": EDF(),
            "LARA (WLS)": LARA(),
            "LARA (true demand)": LARA(predictor=truth),
            "oracle": Oracle(),
        }
        print_rates(pool, diagnosis, args)


if __name__ == "__main__":
    main()
