"""Choose the weigher's training source by what planners complete on its validation families.

Those are corpus families it never trained on; no task set's run is played.

LARA and HOP on the one-step FM network alone, with the fixed analog rule, and with weighers
trained on each source (`WeigherTrainConfig.sources`), paired on episodes of the validation
families, a few families per episode, the history on, no reference runs (as on an unseen kind).

    python studies/cluster_memory/choose_weigher.py --weighers protocol=PATH episodes=PATH
"""

from __future__ import annotations

import argparse

import numpy as np

from coreenv import EnvConfig
from coreenv_lab.fm_training.weigher import WeigherTrainConfig, validation_families
from coreenv_lab.predictors.analog_weigher import AnalogWeigher
from coreenv_lab.predictors.in_context import AnalogPredictor
from mara_agents.evaluation import paired_difference, run_episodes
from mara_agents.predictors import make_predictor
from mara_agents.schedulers import HOP, LARA
from mara_agents.schedulers.hop import HOP_TUNED


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weighers", nargs="+", required=True, help="NAME=PATH")
    parser.add_argument("--episodes", type=int, default=10, help="per group of families")
    parser.add_argument("--group", type=int, default=3)
    parser.add_argument("--seed", type=int, default=950_000, help="first seed (a training seed)")
    parser.add_argument("--planners", nargs="+", default=["lara", "hop"])
    args = parser.parse_args(argv)
    bank, families = validation_families(WeigherTrainConfig())
    base = make_predictor("fm_mara_student")
    predictors = {"base": base, "rule": AnalogPredictor(base, None)}
    for item in args.weighers:
        name, path = item.split("=")
        predictors[name] = AnalogPredictor(base, None, weigher=AnalogWeigher.load(path))
    episodes = []
    for start in range(0, len(families), args.group):
        group = bank.subset(np.isin(bank.family.astype(str), families[start : start + args.group]))
        config = EnvConfig(task_set=group, information="history")
        episodes += [(config, args.seed + i) for i in range(args.episodes)]
    print(f"{len(episodes)} episodes of {len(families)} families: {', '.join(families)}")
    for planner in args.planners:
        rates = {}
        for name, predictor in predictors.items():
            scheduler = (
                LARA(predictor=predictor) if planner == "lara" else HOP(predictor, HOP_TUNED)
            )
            rows = run_episodes(scheduler, episodes)
            rates[name] = np.array([row["completion_rate"] for row in rows])
        print(f"| {planner} on | completion (%) | − base (± SE) |\n|---|---|---|")
        for name, rate in rates.items():
            gain, se = paired_difference(rates["base"], rate)
            print(f"| {name} | {100 * rate.mean():.2f} | {100 * gain:+.2f} ± {100 * se:.2f} |")


if __name__ == "__main__":
    main()
