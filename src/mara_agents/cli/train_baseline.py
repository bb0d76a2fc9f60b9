r"""Train the plain-PPO baseline from scratch: sb3-contrib's MaskablePPO on the SB3 vector form.

    coreenv train-baseline --seed 1 --max-steps 2000000 --minutes 60 \
        --work results/baselines/ppo_sb3/seed_1

Trains on the ID training runs at p = 0.04 (training seeds from ``--env-seed``), judges the
deterministic policy on the ``--eval-episodes`` fixed selection episodes every ``--eval-every``
steps, and keeps ``model.zip`` (to resume: run the same command again), ``best.zip`` and
``history.json`` (the learning curve; ``coreenv learning-curves`` reads it) in ``--work``.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch

from mara_agents.baselines.maskable_ppo import MaskablePPOConfig, train_maskable_ppo
from mara_agents.cli.parser import CommandParser

DEFAULTS = {f.name: f.default for f in dataclasses.fields(MaskablePPOConfig)}
OPTIONS = {
    "max_steps": "environment steps to train for, across resumed runs",
    "minutes": "wall-time budget of this call (run again to continue)",
    "seed": "initial weights and sampling",
    "env_seed": "lane i's episodes play env-seed + i + j * envs",
    "envs": "lanes of the vector environment",
    "n_steps": "steps per lane between updates",
    "batch_size": "minibatch size",
    "epochs": "passes over each rollout",
    "lr": "Adam's learning rate",
    "entropy": "weight of the entropy bonus",
    "gamma": "discount, in (0, 1]",
    "gae_lambda": "GAE's lambda, in (0, 1]",
    "eval_every": "environment steps between evaluations and saves",
    "eval_episodes": "fixed selection episodes per evaluation",
}
"""The `MaskablePPOConfig` fields the command sets, each as ``--field-name``, with its help."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, with ``args.config`` built and checked; bad input exits 2."""
    parser = CommandParser(prog="coreenv train-baseline", description=__doc__.splitlines()[0])
    for name, text in OPTIONS.items():
        flag, kind = "--" + name.replace("_", "-"), type(DEFAULTS[name])
        parser.add_argument(flag, type=kind, default=DEFAULTS[name], help=text)
    parser.add_argument("--work", type=Path, default=None, help="default results/baselines/...")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args(argv)
    work = args.work or Path("results/baselines/ppo_sb3") / f"seed_{args.seed}"
    try:
        args.config = MaskablePPOConfig(work=work, **{n: getattr(args, n) for n in OPTIONS})
    except ValueError as e:  # the config names the field and the value
        parser.error(str(e))
    if args.threads < 1:
        parser.error(f"--threads must be >= 1, got {args.threads}")
    return args


def main(argv: list[str] | None = None) -> None:
    """Train (or continue) the run; print each evaluation and the best."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    history = train_maskable_ppo(args.config)
    best = max(history, key=lambda h: h["eval"])
    print(
        f"done at {history[-1]['steps']} steps: best {100 * best['eval']:.1f}% on the selection "
        f"episodes (at {best['steps']} steps); run in {args.config.work}"
    )
