r"""Train an RL baseline from scratch: MaskablePPO (one controller) or IPPO (the nodes).

    coreenv train-baseline --recipe ppo_slots --seed 1 --work results/baselines/ppo_slots/seed_1
    coreenv train-baseline --algorithm maskable_ppo --seed 1 --max-steps 2000000 --minutes 60
    coreenv train-baseline --algorithm ippo --seed 1 --work results/baselines/ippo/seed_1
    coreenv train-baseline --algorithm ippo --live --decisions events --work results/ippo_live
    coreenv train-baseline --recipe ppo_sets --nodes 8 --work results/baselines/ppo_sets8/seed_1

Trains on the ID training runs at p = 0.04 (scaled by M / 4 on a cluster of M nodes given by
``--nodes``; ``--cluster`` names its speeds and switch cost; training seeds from
``--env-seed``), judges the
greedy policy on the ``--eval-episodes`` fixed selection episodes every ``--eval-every`` steps,
and keeps the state to resume from (run the same command again), the best policy and
``history.json`` (the learning curve; ``coreenv learning-curves`` reads it) in ``--work``
(docs/rl.md). ``--recipe`` starts from a documented recipe (`RECIPES`: its algorithm and
settings; options given beside it override them). Options only one algorithm has are refused for
the other.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch

from coreenv import INFORMATION_MODELS
from mara_agents.baselines.ippo import IPPOConfig, train_ippo
from mara_agents.baselines.maskable_ppo import MaskablePPOConfig, train_maskable_ppo
from mara_agents.baselines.recipes import RECIPES
from mara_agents.cli.parser import CommandParser, add_cluster, cluster_fields, count, per_node
from mara_agents.training import TRAINING_ENV

ALGORITHMS = {
    "maskable_ppo": (MaskablePPOConfig, train_maskable_ppo),
    "ippo": (IPPOConfig, train_ippo),
}
"""Each baseline: its config and its training function."""

OPTIONS = {
    "max_steps": "learner steps to train for, across resumed runs (node choices when sequential)",
    "minutes": "wall-time budget of this call (run again to continue)",
    "seed": "initial weights and sampling",
    "env_seed": "lane i's episodes play env-seed + i + j * envs",
    "envs": "lanes of the vector environment",
    "n_steps": "steps per lane between updates",
    "epochs": "passes over each rollout",
    "lr": "Adam's learning rate",
    "entropy": "weight of the entropy bonus",
    "gamma": "discount, in (0, 1]",
    "gae_lambda": "GAE's lambda, in (0, 1]",
    "eval_every": "learner steps between evaluations and saves",
    "eval_episodes": "fixed selection episodes per evaluation",
    "form": "maskable_ppo: action form, joint (every node in one action) or sequential",
    "policy": "policy network: mlp, symlog_mlp (maskable_ppo) or slot_set (sequential or --live)",
    "decisions": "when nodes decide, step (every step) or events",
    "hold": "most steps a joint action is held at events",
    "minibatches": "minibatches per pass over an update's steps",
    "clip": "epsilon of the clipped objective",
    "value_coef": "weight of the value loss",
    "hidden": "width of the hidden layers (maskable_ppo: policy mlp or symlog_mlp; ippo: both)",
    "live": "ippo: nodes choose in turn under live masks, seeing the slots taken before them",
    "slot_order": "maskable_ppo, sequential form: how observations list the slots, table or "
    "deadline",
    "observe": "maskable_ppo: the predictor whose estimates the policy observes",
}
"""The config fields the command sets, each as ``--field-name``, with its help."""


def _defaults(config: type) -> dict:
    return {f.name: f.default for f in dataclasses.fields(config) if f.name in OPTIONS}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, with ``args.config`` built and checked; bad input exits 2."""
    parser = CommandParser(prog="coreenv train-baseline", description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", choices=sorted(ALGORITHMS), default=None)
    parser.add_argument("--recipe", choices=sorted(RECIPES), default=None, help="start from it")
    known = {**_defaults(MaskablePPOConfig), **_defaults(IPPOConfig)}
    for name, text in OPTIONS.items():
        flag, kind = "--" + name.replace("_", "-"), type(known[name])
        if kind is bool:  # a switch: given means True
            parser.add_argument(flag, action="store_const", const=True, default=None, help=text)
            continue
        parser.add_argument(flag, type=kind, default=None, help=f"{text} (default per algorithm)")
    parser.add_argument("--work", type=Path, default=None, help="default results/baselines/...")
    parser.add_argument("--threads", type=count, default=1, help="torch threads")
    add_cluster(parser)
    parser.add_argument(
        "--information",
        choices=INFORMATION_MODELS,
        default=None,
        help="what the policy may read of a task (EnvConfig.information; default: prefix)",
    )
    args = parser.parse_args(argv)
    cluster = cluster_fields(parser, args)
    algorithm, settings = RECIPES[args.recipe] if args.recipe else ("maskable_ppo", {})
    if args.recipe and args.algorithm not in (None, algorithm):
        parser.error(f"--recipe {args.recipe} trains {algorithm}, not --algorithm {args.algorithm}")
    args.algorithm = algorithm = args.algorithm or algorithm
    config_type, _ = ALGORITHMS[algorithm]
    given = {name: getattr(args, name) for name in OPTIONS if getattr(args, name) is not None}
    foreign = sorted(set(given) - set(_defaults(config_type)))
    if foreign:
        flags = ", ".join("--" + name.replace("_", "-") for name in foreign)
        parser.error(f"--algorithm {args.algorithm} does not read {flags}")
    seed = given.get("seed", _defaults(config_type)["seed"])
    work = args.work or Path("results/baselines") / (args.recipe or algorithm) / f"seed_{seed}"
    if cluster:  # the training episodes on that cluster, at the training load per node
        (load,) = per_node([TRAINING_ENV["arrival_prob"]], cluster)
        given["env"] = {**TRAINING_ENV, **cluster, "arrival_prob": load}
    if args.information is not None:
        given["env"] = {**given.get("env", TRAINING_ENV), "information": args.information}
    try:
        args.config = config_type(work=work, **{**settings, **given})
    except ValueError as e:  # the config names the field and the value
        parser.error(str(e))
    return args


def main(argv: list[str] | None = None) -> None:
    """Train (or continue) the run; print each evaluation and the best."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    history = ALGORITHMS[args.algorithm][1](args.config)
    best = max(history, key=lambda h: h["eval"])
    print(
        f"done at {history[-1]['steps']} steps: best {100 * best['eval']:.1f}% on the selection "
        f"episodes (at {best['steps']} steps); run in {args.config.work}"
    )
