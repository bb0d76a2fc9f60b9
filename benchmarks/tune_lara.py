"""Tune LARA on the ID training runs only: its WLS settings, then its exploration length.

    python benchmarks/tune_lara.py

1. WLS: capped MAE and success accuracy over a grid of discount × ridge, by the predictor query
   protocol on the ``id_train`` runs (never the test runs).
2. Exploration: LARA's completion rate for several exploration lengths at the default regime,
   on ``id_train`` with training seeds (below the evaluation seeds).
3. Diagnosis: FIFO, EDF, LARA with WLS and LARA with the true remaining demand (a clairvoyant
   predictor), which separates the allocation rule from the estimation error.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from coreenv.curves import named_task_set
from mara_agents import evaluate
from mara_agents.predictors import ClairvoyantPredictor, WLSConfig, WLSPredictor
from mara_agents.predictors.evaluation import QueryConfig, make_queries, score
from mara_agents.schedulers import EDF, FIFO, LARA, Oracle


def rate(job: tuple) -> tuple[str, float, float]:
    label, scheduler, episodes, seed, task_set = job
    result = evaluate(scheduler, episodes, seed, task_set=task_set)
    return label, result["completion_rate"], result["completion_rate_std"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-set", default="id_train")
    parser.add_argument(
        "--discounts", type=float, nargs="+", default=[0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 1.0]
    )
    parser.add_argument("--ridges", type=float, nargs="+", default=[0.0, 1e-3, 1e-1])
    parser.add_argument("--explore", type=int, nargs="+", default=[5, 10, 20, 40, 80])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0, help="training seeds: keep below 1e6")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)

    queries = make_queries(named_task_set(args.task_set), QueryConfig(per_curve=4))
    print(f"WLS on {len(queries)} {args.task_set} queries (H = 500)\n")
    print("| discount | ridge | capped MAE | success accuracy (%) |\n|---|---|---|---|")
    for discount in args.discounts:
        for ridge in args.ridges:
            config = WLSConfig(discount=discount, ridge=ridge)
            r = score(WLSPredictor(config), queries, config.horizon)
            print(
                f"| {discount} | {ridge} | {r['capped_mae']:.1f} | "
                f"{100 * r['success_accuracy']:.1f} |",
                flush=True,
            )

    print(f"\nLARA (default WLS) on {args.task_set}, {args.episodes} training episodes each\n")
    print("| explore (batches) | completion rate (%) | std |\n|---|---|---|")
    common = (args.episodes, args.seed, args.task_set)
    jobs = [(str(e), LARA(explore=e), *common) for e in args.explore]
    with ProcessPoolExecutor(args.workers) as pool:
        for explore, mean, std in pool.map(rate, jobs):
            print(f"| {explore} | {100 * mean:.1f} | {100 * std:.1f} |", flush=True)

        print(f"\nDiagnosis on {args.task_set}: allocation rule vs estimation error\n")
        print("| scheduler | completion rate (%) | std |\n|---|---|---|")
        truth = ClairvoyantPredictor(named_task_set(args.task_set))
        jobs = [
            ("FIFO", FIFO(), *common),
            ("EDF", EDF(), *common),
            ("LARA (WLS)", LARA(), *common),
            ("LARA (true demand)", LARA(predictor=truth), *common),
            ("oracle", Oracle(), *common),
        ]
        for label, mean, std in pool.map(rate, jobs):
            print(f"| {label} | {100 * mean:.1f} | {100 * std:.1f} |", flush=True)


if __name__ == "__main__":
    main()
