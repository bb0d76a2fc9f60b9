r"""Train the RL baseline from scratch: the slot-set MaskablePPO recipe that made ``ppo``.

    coreenv train-baseline --seed 1 --work results/baselines/ppo/seed_1
    coreenv train-baseline --cluster 8/16 --minutes 30 --work results/baselines/ppo8/seed_1

Trains the recipe `mara_agents.training.recipes.RECIPES["ppo"]` (sb3-contrib's MaskablePPO, the
slot-set network reading nodes and slots as sets, on the sequential event form with WLS
estimates) on the ID training runs at the cluster's default load (`coreenv.default_arrival_prob`
of ``--cluster``), judges the greedy policy on the ``--eval-episodes`` fixed
selection episodes every ``--eval-every`` steps, and keeps in ``--work`` the state to resume
from (run the same command again), ``best.zip`` (play it: ``coreenv compare lara
WORK/best.zip``) and ``history.json``, the learning curve (docs/rl.md). Other settings are
fields of `MaskablePPOConfig`, for runs made in Python.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from mara_agents.cli.parser import CommandParser, add_cluster, count
from mara_agents.training.maskable_ppo import train_maskable_ppo
from mara_agents.training.recipe import training_env
from mara_agents.training.recipes import RECIPES, make_recipe
from mara_agents.training.runs import check_work


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, with ``args.config`` built and checked; bad input exits 2."""
    parser = CommandParser(prog="coreenv train-baseline", description=__doc__.splitlines()[0])
    recipe = RECIPES["ppo"][1]
    add = parser.add_argument
    add("--seed", type=int, default=0, help="initial weights and sampling (default 0)")
    add("--minutes", type=float, default=None, help="wall-time budget of this call (default none)")
    add(
        "--max-steps",
        type=count,
        default=recipe["max_steps"],
        help=f"node choices to train for, across resumed calls (default {recipe['max_steps']:,})",
    )
    add(
        "--eval-every",
        type=count,
        default=recipe["eval_every"],
        help=f"steps between evaluations and saves (default {recipe['eval_every']:,})",
    )
    add("--eval-episodes", type=count, default=100, help="selection episodes (default 100)")
    add("--work", type=Path, default=None, help="default results/baselines/ppo/seed_SEED")
    add("--threads", type=count, default=1, help="torch threads (default 1)")
    add_cluster(parser)
    args = parser.parse_args(argv)
    cluster = args.cluster
    fields = {
        "seed": args.seed,
        "max_steps": args.max_steps,
        "eval_every": args.eval_every,
        "eval_episodes": args.eval_episodes,
    }
    if args.minutes is not None:
        fields["minutes"] = args.minutes
    if cluster:
        fields["env"] = training_env(cluster)
    work = args.work or Path("results/baselines/ppo") / f"seed_{args.seed}"
    try:
        args.config = make_recipe("ppo", work, **fields)
        check_work(args.config)
    except ValueError as e:  # the config (or the work folder's run) names the field and values
        parser.error(str(e))
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
    if best["eval"] == 0:
        print(
            "no policy so far completed a task: the untrained greedy policy idles every node. "
            "Train for more steps (--max-steps, --minutes) before reading its score."
        )
