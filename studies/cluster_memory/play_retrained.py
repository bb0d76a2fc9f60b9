"""Play a retrained MARA reading a given predictor on the sweep's evaluation episodes, history on.

    python studies/cluster_memory/play_retrained.py results/history_only/mara.pt \
        --reads fm_mara_learned --name mara_history_only --out results/history_only/sweep

The checkpoint's own predictor is replaced by ``--reads`` (a name of
`coreenv_lab.predictors.make_predictor`): a policy trained on estimates without reference runs
(`train_history_only.py`) plays reading them. The rows (ID, RL OOD and ViT OOD test runs,
p = 0.04, 40 episodes each by default) pair with any sweep of the same seeds
(`benchmarks/compare_rows.py`).
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

import torch

from coreenv_lab.predictors import LAB_PREDICTORS, make_predictor
from mara_agents.predictors import POLICY_PREDICTORS
from mara_agents.schedulers.mara import MARA
from mara_agents.sweep import SweepConfig, run_sweep


def load(path: Path, reads: str, name: str) -> MARA:
    """The policy at ``path`` reading ``reads`` in place of the predictor it records."""
    recorded = torch.load(path, map_location="cpu", weights_only=True)["predictor"]
    policy = MARA.pretrained(path=path, predictors={recorded: make_predictor(reads)})
    policy.name = name
    return policy


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument(
        "--reads",
        choices=sorted({**POLICY_PREDICTORS, **LAB_PREDICTORS}),
        default="fm_mara_learned",
    )
    parser.add_argument("--name", default="mara_retrained")
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    factory = functools.partial(load, args.checkpoint, args.reads, args.name)
    factory.name = args.name  # the sweep's name for a method given as a factory
    config = SweepConfig(
        methods=(factory,),
        task_sets=("id", "rl_ood", "vit_ood"),
        arrival_prob=(0.04,),
        episodes=args.episodes,
        env={"information": "history"},
        out=args.out,
    )
    run_sweep(config)


if __name__ == "__main__":
    main()
