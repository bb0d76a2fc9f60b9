r"""Compare schedulers paired on the same episodes: the choice of which policy to ship.

    coreenv compare mara results/quantiles/imitation/mara.pt \
        --episodes 100 --seed 950000 --task-set id_train --arrival-prob 0.04

Each policy is anything the sweep plays (a method's name such as ``lara`` or ``mara``, or
``module:Class``, with keyword arguments if any) or a trained policy's file (a MARA ``.pt`` from
`MARA.save`, a MaskablePPO ``.zip`` from ``coreenv train-baseline``). ``--task-set`` is a name or a
bank's path (a ``.npz`` bank or a CSV of training logs). All play
the same ``--episodes`` episodes from ``--seed`` with their own predictor and quantile layout
(MARA files share one predictor per name, so they reuse each other's futures); the table gives
each one's completion (95% bootstrap interval, interquartile mean), its paired difference from the
first and the probability it beats the first on an episode. To choose among training recipes, use
training seeds no run trained or selected on (training uses 100,000–899,999, selection
900,000–900,099; 950,000+ is free) and the ``id_train`` runs: the sweep's evaluation seeds
(1,000,000+) and test runs stay unseen.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coreenv import EnvConfig, default_arrival_prob
from coreenv.curves import TASK_SETS, resolve_task_set
from mara_agents import seeds
from mara_agents.cli.parser import (
    CommandParser,
    add_arrival_prob,
    add_cluster,
    methods_listing,
)
from mara_agents.evaluation import completion_rates
from mara_agents.intervals import improvement_probability, iqm, mean_interval, paired_interval
from mara_agents.sweep.methods import SweepInputError, load_checkpoint, make_scheduler
from mara_agents.sweep.report import cluster_label


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, each policy built (``args.schedulers``); bad input exits 2."""
    parser = CommandParser(
        prog="coreenv compare", description=__doc__.splitlines()[0], epilog=methods_listing()
    )
    parser.add_argument(
        "policies",
        nargs="+",
        help="the methods listed below, module:Class (with keyword arguments if any), or policy "
        "files (MARA .pt, MaskablePPO .zip); the first is the reference",
    )
    parser.add_argument("--episodes", type=int, default=100, help="episodes played, >= 2")
    parser.add_argument("--seed", type=int, default=seeds.CHOICE, help="the first episode's seed")
    parser.add_argument(
        "--task-set",
        default="id_train",
        help=f"the episodes' tasks: a name {sorted(TASK_SETS)} or a bank's path (default id_train)",
    )
    add_arrival_prob(
        parser,
        None,
        old="--load",
        help="arrival probability p (default: the cluster's, 0.01 per unit of node speed)",
    )
    add_cluster(parser)
    args = parser.parse_args(argv)
    args.env = args.cluster
    if args.arrival_prob is None:
        config = EnvConfig(**args.env)
        args.arrival_prob = default_arrival_prob(config.num_nodes, config.node_speeds)
    if args.episodes < 2:
        parser.error(f"--episodes must be >= 2 (a paired standard error), got {args.episodes}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    try:
        resolve_task_set(args.task_set)
    except ValueError as e:  # ConfigError, BankError: the message names the choices
        parser.error(f"--task-set {args.task_set}: {e}")
    args.schedulers, predictors = [], {}
    for policy in args.policies:
        try:
            if Path(policy).suffix in (".pt", ".zip"):
                args.schedulers.append(load_checkpoint(policy, predictors))
            else:
                args.schedulers.append(make_scheduler(policy))
        except (SweepInputError, FileNotFoundError) as e:
            parser.error(f"{policy}: {e}")
    return args


def main(argv: list[str] | None = None) -> None:
    """Play every policy on the same episodes; print completions and paired differences."""
    args = parse_args(argv)
    env = {"task_set": args.task_set, "arrival_prob": args.arrival_prob, **args.env}
    rates = [completion_rates(s, args.episodes, args.seed, **env) for s in args.schedulers]
    p, seed = args.arrival_prob, args.seed
    cluster = f", cluster {cluster_label(args.env)}" if args.env else ""
    print(f"{args.episodes} episodes of {args.task_set} at p = {p} from seed {seed}{cluster}\n")
    first = args.policies[0]
    print(f"| policy | completion [95% CI] | IQM | − {first} (paired, [95% CI]) | P(> {first}) |")
    print("|---|---|---|---|---|")
    for name, r in zip(args.policies, rates):
        completion = mean_interval(r).scaled(100).text(2)
        difference = paired_interval(rates[0], r).scaled(100).text(2, sign=True)
        beats = improvement_probability(rates[0], r)
        print(f"| {name} | {completion} | {100 * iqm(r):.2f} | {difference} | {beats:.2f} |")


if __name__ == "__main__":
    main()
