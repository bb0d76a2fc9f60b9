"""The shipped MARA in the event form, against every step, on training episodes (the hold's choice).

    python studies/performance/mara_hold.py --holds 2 4 8 16

`id_train` at p = 0.04, the selection seeds (900,000+); each hold's completion and its paired
difference from deciding every step. The lab's sweep method ``coreenv_lab.methods:mara_events``
plays the hold chosen here (`coreenv_lab.methods.EVENT_HOLD`).
"""

from __future__ import annotations

import argparse

import numpy as np

from coreenv import Decisions, EnvConfig
from mara_agents import seeds
from mara_agents.evaluation import paired_difference, run_episodes
from mara_agents.schedulers import MARA


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holds", nargs="+", type=int, default=[2, 4, 8, 16])
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args(argv)
    config = EnvConfig(task_set="id_train", arrival_prob=0.04)
    episodes = [(config, seeds.SELECTION + i) for i in range(args.episodes)]
    rates = {}
    print("| hold | completion (%) | − every step (± SE) |\n|---|---|---|")
    for hold in [1, *args.holds]:
        policy = MARA.pretrained("mara")
        if hold > 1:
            policy.decisions = Decisions("events", hold=hold)
        rates[hold] = np.array([row["completion_rate"] for row in run_episodes(policy, episodes)])
        gain, se = paired_difference(rates[1], rates[hold])
        shown = "" if hold == 1 else f"{100 * gain:+.2f} ± {100 * se:.2f}"
        label = "every step" if hold == 1 else hold
        print(f"| {label} | {100 * rates[hold].mean():.2f} | {shown} |")


if __name__ == "__main__":
    main()
