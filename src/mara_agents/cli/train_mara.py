r"""Train MARA: the recipe of the shipped networks, expert iteration on HOP, then RL.

    coreenv train-mara --minutes 60 --work results/mara/mara
    coreenv train-mara --variant mara_sets --minutes 60 --work results/mara/mara_sets

``--variant`` is the network: ``mara`` (four nodes, eight slots) or ``mara_sets`` (reads nodes and
slots as sets, so it plays any number of equal nodes). The recipe (`MARATrainConfig`'s defaults):

1. **Expert iteration** (warm start): MAT learns to copy HOP on the flow-matching estimates on
   ``--demo-episodes`` episodes, then ``--dagger-rounds`` rounds in which the student plays and
   HOP labels (DAgger).
2. **RL** for ``--minutes`` of wall time: the grouped policy gradient on the potential-shaped
   reward (β 1, γ 1), whole episodes per seed with leave-one-out baselines and a KL anchor to the
   imitation policy.

Every ``--eval-every`` updates the deterministic policy is judged on ``--eval-episodes`` fixed
``id_train`` episodes with training seeds (never the sweep's evaluation seeds); the best so far
goes to ``WORK/mara.pt`` (play it: ``coreenv compare mara WORK/mara.pt``). The training state is
saved in ``--work`` at each evaluation and a rerun resumes from it, the budget counting across
runs. How this recipe differs from the paper's (MAT + PPO from scratch): docs/mara.md. Every
other setting is a field of `MARATrainConfig`, for runs made in Python.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch

from mara_agents.cli.parser import CommandParser, count
from mara_agents.schedulers.variants import VARIANTS
from mara_agents.training import ImitationConfig, MARATrainConfig, train_mara
from mara_agents.training.recipe import MARA_GROUPED

RUN = {f.name: f.default for f in dataclasses.fields(MARATrainConfig)}
IMITATION = ImitationConfig()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, with ``args.config`` built and checked; bad input exits 2."""
    parser = CommandParser(prog="coreenv train-mara", description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--variant", choices=sorted(VARIANTS), default="mara", help="the network (default mara)")
    add("--minutes", type=float, default=RUN["minutes"], help="RL wall-time budget (default 60)")
    add("--seed", type=int, default=0, help="initial weights and the RL stage's sampling")
    add(
        "--demo-episodes",
        type=count,
        default=IMITATION.episodes,
        help=f"HOP's episodes copied first (default {IMITATION.episodes})",
    )
    add(
        "--dagger-rounds",
        type=int,
        default=IMITATION.dagger_rounds,
        help=f"rounds of DAgger (default {IMITATION.dagger_rounds})",
    )
    add(
        "--eval-every",
        type=count,
        default=RUN["eval_every"],
        help=f"RL updates between evaluations (default {RUN['eval_every']})",
    )
    add(
        "--eval-episodes",
        type=count,
        default=RUN["eval_episodes"],
        help=f"selection episodes (default {RUN['eval_episodes']})",
    )
    add("--work", type=Path, default=None, help="default results/mara/VARIANT")
    add("--device", default="cpu", help="torch device: cpu (default), cuda, ...")
    add("--threads", type=count, default=1, help="torch CPU threads (default 1)")
    args = parser.parse_args(argv)
    if args.dagger_rounds < 0:
        parser.error(f"--dagger-rounds must be an int >= 0, got {args.dagger_rounds}")
    work = args.work or Path("results/mara") / args.variant
    variant = VARIANTS[args.variant]
    try:
        args.config = MARATrainConfig(
            work=work,
            out=work / "mara.pt",
            variant=args.variant,
            minutes=args.minutes,
            grouped=dataclasses.replace(MARA_GROUPED, seed=args.seed),
            imitation=dataclasses.replace(
                IMITATION, episodes=args.demo_episodes, dagger_rounds=args.dagger_rounds
            ),
            seed=args.seed,
            mat=dataclasses.replace(
                RUN["mat"], sets=variant.sets, encoder="slots" if variant.sets else RUN["mat"].encoder
            ),
            eval_every=args.eval_every,
            eval_episodes=args.eval_episodes,
            device=args.device,
        )
    except ValueError as e:  # the config names the field and the value
        parser.error(str(e))
    return args


def main(argv: list[str] | None = None) -> None:
    """Train (or resume) the run and print where its policy went."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    run = train_mara(args.config)
    print(f"done: best completion on the selection episodes {100 * run.best:.1f}%, in {run.out}")
