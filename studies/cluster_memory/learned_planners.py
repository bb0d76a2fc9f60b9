"""What the learned weigher adds to LARA and HOP on the one-step FM network, paired by seed.

Each planner reads the network alone, with the fixed analog rule and with the weigher.

    python studies/cluster_memory/learned_planners.py --out results/learned_planners

Evaluation seeds (the sweep's), history on, p = 0.04, 40 episodes per set; rows go to ``--out``
(resumable) and the table prints each method's completion and its paired difference from the
same planner on the base alone.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

import numpy as np

from coreenv_lab.predictors import make_predictor
from mara_agents.evaluation import paired_difference
from mara_agents.schedulers import HOP, LARA
from mara_agents.schedulers.hop import HOP_TUNED
from mara_agents.sweep import SweepConfig, run_sweep

PREDICTORS = {"": "fm_mara_student", "_rule": "fm_mara_analog", "_learned": "fm_mara_learned"}
"""Suffix of the method's name -> the predictor its planner reads (`coreenv_lab.predictors`)."""
SETS = ("id", "rl_ood", "vit_ood")


def play(planner: str, predictor: str, name: str):
    """``planner`` on ``predictor``, named ``name``."""
    if planner == "lara":
        scheduler = LARA(predictor=make_predictor(predictor))
    else:
        scheduler = HOP(make_predictor(predictor), HOP_TUNED)
    scheduler.name = name
    return scheduler


def factory(planner: str, predictor: str, name: str) -> functools.partial:
    """A sweep factory of `play` (a partial, so that worker processes can receive it)."""
    make = functools.partial(play, planner, predictor, name)
    make.name = name
    return make


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--planners", nargs="+", default=["lara", "hop"], choices=["lara", "hop"])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    methods = [
        factory(planner, predictor, f"{planner}_student{suffix}")
        for planner in args.planners
        for suffix, predictor in PREDICTORS.items()
    ]
    config = SweepConfig(
        methods=tuple(methods),
        task_sets=SETS,
        arrival_prob=(0.04,),
        episodes=args.episodes,
        env={"information": "history"},
        out=args.out,
    )
    rows = run_sweep(config)
    rates = {}
    for row in rows:
        rates.setdefault((row["method"], row["task_set"]), {})[row["seed"]] = row["completion_rate"]
    print("| method | " + " | ".join(f"{s} (%) | − base (± SE)" for s in SETS) + " |")
    print("|---|" + "---|---|" * len(SETS))
    for planner in args.planners:
        for suffix in PREDICTORS:
            name = f"{planner}_student{suffix}"
            cells = []
            for task_set in SETS:
                mine, base = rates[(name, task_set)], rates[(f"{planner}_student", task_set)]
                seeds = sorted(mine)
                a = np.array([base[s] for s in seeds])
                b = np.array([mine[s] for s in seeds])
                gain, se = paired_difference(a, b)
                cells += [f"{100 * b.mean():.1f}", f"{100 * gain:+.2f} ± {100 * se:.2f}"]
            print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
