r"""Train MARA by the shipped network's recipe: expert iteration on HOP, then RL, on many clusters.

    coreenv train-mara --minutes 45 --work results/mara/mara
    coreenv train-mara --clusters "8/16 mixed_costly" --minutes 30 --work results/mara/mixed

One network reads the cluster as a set (a token per node with its speed, a key per slot with
where its task last ran and what resuming it there would cost), so it plays any number of nodes,
speeds and switch costs. It trains on ``--clusters`` (default: `TRAINING_CLUSTERS`, 4 to 12
nodes, equal and mixed speeds, switch costs 0 and 5, each at its capacity's load). The recipe:

1. **Expert iteration** (warm start): MAT learns to copy HOP on the flow-matching estimates on
   ``--demo-episodes`` episodes shared out among the clusters, then ``--dagger-rounds`` rounds in
   which the student plays and HOP labels (DAgger).
2. **RL** for ``--minutes`` of wall time: the grouped policy gradient on the potential-shaped
   reward (β 1, γ 1), whole episodes per seed with leave-one-out baselines and a KL anchor to the
   imitation policy, deciding at events (update u on cluster u mod n).

Every ``--eval-every`` updates the deterministic policy, deciding at events, is judged on
``--eval-episodes`` fixed ``id_train`` episodes shared out among the clusters, with training
seeds (never the sweep's evaluation seeds); the best so far goes to ``WORK/mara.pt`` (play it:
``coreenv compare mara WORK/mara.pt``). The training state is saved in ``--work`` at each
evaluation and a rerun resumes from it, the budget counting across runs. How this recipe differs
from the paper's (MAT + PPO from scratch): docs/mara.md. Every other setting is a field of
`MARATrainConfig`, for runs made in Python.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch

from mara_agents.cli.parser import CommandParser, count
from mara_agents.schedulers.variants import TRAINING_CLUSTERS, VARIANTS
from mara_agents.training import ImitationConfig, MARATrainConfig, train_mara
from mara_agents.training.recipe import MARA_GROUPED, recipe_network

RUN = {f.name: f.default for f in dataclasses.fields(MARATrainConfig)}
IMITATION = ImitationConfig()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, with ``args.config`` built and checked; bad input exits 2."""
    parser = CommandParser(prog="coreenv train-mara", description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--minutes", type=float, default=RUN["minutes"], help="RL wall-time budget (default 60)")
    add(
        "--clusters",
        nargs="+",
        default=None,
        metavar="SHAPE",
        help="clusters to train on, each 'M/K name' (e.g. '8/16 mixed_costly'); default: "
        + " ".join(f"'{shape}'" for shape in TRAINING_CLUSTERS),
    )
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
    add("--work", type=Path, default=Path("results/mara/mara"), help="default results/mara/mara")
    add("--device", default="cpu", help="torch device: cpu (default), cuda, ...")
    add("--threads", type=count, default=1, help="torch CPU threads (default 1)")
    args = parser.parse_args(argv)
    if args.dagger_rounds < 0:
        parser.error(f"--dagger-rounds must be an int >= 0, got {args.dagger_rounds}")
    work = args.work
    variant = VARIANTS["mara"]
    clusters = tuple(args.clusters or variant.clusters)
    try:
        args.config = MARATrainConfig(
            work=work,
            out=work / "mara.pt",
            minutes=args.minutes,
            grouped=dataclasses.replace(MARA_GROUPED, seed=args.seed),
            imitation=dataclasses.replace(
                IMITATION, episodes=args.demo_episodes, dagger_rounds=args.dagger_rounds
            ),
            seed=args.seed,
            clusters=clusters,
            mat=recipe_network(variant, clusters),
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
