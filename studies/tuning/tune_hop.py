"""Tune HOP's knobs on the ID training runs with training seeds only, one knob at a time.

    python studies/tuning/tune_hop.py                 # 100 paired episodes per setting, 2 workers

Each stage tries the values of one `HOPConfig` field with the others at the best so far, every
setting on the same ``--episodes`` training episodes (``id_train``, p = 0.04, seeds from
``--seed``, below the sweep's evaluation seeds), and keeps the value with the best mean completion
rate. Each row prints the paired difference to the current best ± its standard error. Stages:
exploration, then the planned tier's share threshold, then the deadline slack, then the quantile
of the point estimate. FM's futures of every training prefix are sampled once up front
(``--predictor wls`` tunes HOP-WLS instead).
"""

from __future__ import annotations

import argparse
import dataclasses
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

from mara_agents.cli.parser import count
from mara_agents.evaluation import completion_rates, paired_difference
from mara_agents.schedulers import HOP, HOPConfig
from mara_agents.training.recipe import TRAINING_ENV, warm_predictor

STAGES = {
    "explore": [3, 5, 10, 20],
    "min_share": [0.0, 0.25, 0.5],
    "slack": [0, 1, 2, 4],
    "quantile": [0.3, 0.5, 0.7],
}
EVALUATION_SEEDS = 1_000_000  # the sweep's first evaluation seed


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=300_000, help="training seeds: below 1e6")
    parser.add_argument("--workers", type=count, default=2)
    parser.add_argument("--stages", nargs="+", choices=list(STAGES), default=list(STAGES))
    parser.add_argument("--predictor", choices=("fm", "wls"), default="fm", help="HOP's samples")
    args = parser.parse_args(argv)
    if args.episodes < 2:
        parser.error(f"--episodes must be >= 2 for a standard error, got {args.episodes}")
    if args.seed < 0 or args.seed + args.episodes > EVALUATION_SEEDS:
        parser.error(
            f"--seed {args.seed} with {args.episodes} episodes reaches the evaluation seeds "
            f"({EVALUATION_SEEDS:,}+); keep seed + episodes <= {EVALUATION_SEEDS:,}"
        )
    return args


PREDICTOR = None  # set before the pool forks, so workers share the sampled futures


def rates(config: HOPConfig, episodes: int, seed: int) -> np.ndarray:
    torch.set_num_threads(1)
    return completion_rates(HOP(PREDICTOR, config), episodes, seed, **TRAINING_ENV)


def rates_of(configs: list[HOPConfig], args: argparse.Namespace) -> list[np.ndarray]:
    """Each config's per-episode completion rates on the same episodes, in ``args.workers``."""
    if args.workers == 1:
        return [rates(config, args.episodes, args.seed) for config in configs]
    with ProcessPoolExecutor(args.workers) as pool:
        n = len(configs)
        return list(pool.map(rates, configs, [args.episodes] * n, [args.seed] * n))


def main(argv: list[str] | None = None) -> None:
    global PREDICTOR
    args = parse_args(argv)
    PREDICTOR = warm_predictor(args.predictor)
    best = HOPConfig()
    (best_rates,) = rates_of([best], args)
    print(f"\nstart {best}: {100 * best_rates.mean():.2f}% on {args.episodes} episodes")
    for field in args.stages:
        print(f"\n| {field} | completion (%) | − best so far (points) |\n|---|---|---|")
        tried = {v: dataclasses.replace(best, **{field: v}) for v in STAGES[field]}
        new = [v for v, c in tried.items() if c != best]
        results = dict(zip(new, rates_of([tried[v] for v in new], args)))
        results[getattr(best, field)] = best_rates
        for value in STAGES[field]:
            mean, se = paired_difference(best_rates, results[value])
            print(
                f"| {value} | {100 * results[value].mean():.2f} | {100 * mean:+.2f} ± "
                f"{100 * se:.2f} |",
                flush=True,
            )
        chosen = max(STAGES[field], key=lambda v: results[v].mean())
        best, best_rates = tried[chosen], results[chosen]
        print(f"keep {field} = {chosen}")
    print(f"\nbest: {best}, {100 * best_rates.mean():.2f}% on {args.episodes} training episodes")


if __name__ == "__main__":
    main()
