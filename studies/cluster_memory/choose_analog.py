"""Choose `AnalogPredictor`'s settings on the ID *training* runs, never on a test run.

LARA on FM, and on FM moved towards analogs under each candidate setting, paired on training-seed
episodes of the ID training runs with the history on (the reference is the same training runs:
a task's own run, replayed, is left out by the predictor). Prints each setting's completion and
its paired difference from LARA-FM (± standard error).

    python studies/cluster_memory/choose_analog.py --episodes 30 --seed 960000
"""

from __future__ import annotations

import argparse

import numpy as np

from coreenv import EnvConfig
from coreenv.curves import named_task_set
from coreenv_lab.predictors import make_predictor
from coreenv_lab.predictors.analogs import AnalogConfig
from coreenv_lab.predictors.in_context import AnalogPredictor
from mara_agents.evaluation import paired_difference, run_episodes
from mara_agents.schedulers import LARA

CANDIDATES = {
    "1 neighbour, 24 windows": AnalogConfig(kind_fields=("family", "optimizer")),
    "3 neighbours (chosen)": AnalogConfig(kind_fields=("family", "optimizer"), neighbours=3),
    "12 windows": AnalogConfig(kind_fields=("family", "optimizer"), windows=12),
    "the family alone": AnalogConfig(kind_fields=("family",)),
}
"""The settings compared; the one that did best is `IN_CONTEXT`
(`coreenv_lab.predictors.in_context`)."""


def main(argv: list[str] | None = None) -> None:
    """Play every candidate on the same training episodes and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30, help="training episodes, >= 2")
    parser.add_argument("--seed", type=int, default=960_000, help="first seed, < 1,000,000")
    parser.add_argument(
        "--predictor", default="fm", help="the base predictor's name (coreenv_lab.predictors)"
    )
    parser.add_argument("--horizon", type=int, default=1000, help="arrival horizon (steps)")
    args = parser.parse_args(argv)
    if args.episodes < 2 or not 0 <= args.seed <= 1_000_000 - args.episodes:
        parser.error("--episodes must be >= 2 and the seeds below 1,000,000 (training seeds)")
    base = make_predictor(args.predictor)
    reference = named_task_set("id_train")
    config = EnvConfig(task_set="id_train", information="history", arrival_horizon=args.horizon)
    episodes = [(config, args.seed + i) for i in range(args.episodes)]

    def rates(predictor) -> np.ndarray:
        rows = run_episodes(LARA(predictor=predictor), episodes)
        return np.array([row["completion_rate"] for row in rows])

    alone = rates(base)
    print(f"| setting | completion (%) | − LARA-{args.predictor} (± SE) |")
    print("|---|---|---|")
    print(f"| {args.predictor} alone | {100 * alone.mean():.2f} | |")
    for name, setting in CANDIDATES.items():
        mine = rates(AnalogPredictor(base, reference, setting))
        gain, se = paired_difference(alone, mine)
        print(f"| {name} | {100 * mine.mean():.2f} | {100 * gain:+.2f} ± {100 * se:.2f} |")


if __name__ == "__main__":
    main()
