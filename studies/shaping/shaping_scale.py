"""The shaping term's size per held decision, beside the completions (docs/mara.md).

    python studies/shaping/shaping_scale.py             # LARA and random, 20 episodes
    python studies/shaping/shaping_scale.py --methods lara --episodes 50 --lam 1.0

Each method plays ``--episodes`` training-seed episodes (from ``--seed``) in the event form with
β = 1; every decision's reward is split into completions and the shaping term β·(Φ' − Φ)
(`coreenv_lab.training.shaping`). The table gives both per decision and in GAE's λ-sums (γ = 1),
their correlation there, and what each sums to over an episode.
"""

from __future__ import annotations

import argparse

from coreenv import Decisions, make_config
from coreenv.curves import TASK_SETS
from coreenv_lab.training.shaping import decision_rewards, shaping_scale
from mara_agents.cli.parser import CommandParser, add_arrival_prob, count
from mara_agents.sweep import SweepInputError, make_scheduler, validate


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = CommandParser(prog="shaping_scale.py", description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=["lara", "random"])
    parser.add_argument("--episodes", type=count, default=20)
    parser.add_argument("--seed", type=int, default=900_000, help="first episode (training seeds)")
    parser.add_argument("--task-set", default="id_train", choices=sorted(TASK_SETS))
    add_arrival_prob(parser, 0.04, old="--load")
    parser.add_argument("--hold", type=count, default=8, help="most steps a decision is held")
    parser.add_argument("--lam", type=float, default=0.95, help="GAE's λ, in [0, 1]")
    args = parser.parse_args(argv)
    if not 0.0 <= args.lam <= 1.0:
        parser.error(f"--lam must be in [0, 1], got {args.lam}.")
    try:
        validate(args.methods, [args.task_set], [args.arrival_prob])
    except SweepInputError as e:
        parser.error(str(e))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config = make_config(None, task_set=args.task_set, arrival_prob=args.arrival_prob)
    decisions = Decisions(at="events", hold=args.hold)
    print(
        f"{args.episodes} episodes of {args.task_set} at p = {args.arrival_prob} "
        f"from seed {args.seed}, decisions at events (hold {args.hold}), β = 1, λ = {args.lam}\n"
    )
    print(
        "| method | decisions / episode | sd per decision: completions | shaping "
        "| sd of λ-sums: completions | shaping | correlation of λ-sums "
        "| per episode: completions | shaping |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for method in args.methods:
        scheduler = make_scheduler(method)
        episodes = [
            decision_rewards(scheduler, config, args.seed + i, decisions)
            for i in range(args.episodes)
        ]
        s = shaping_scale(episodes, args.lam)
        print(
            f"| {method} | {s.decisions:.1f} | {s.successes_std:.3f} | {s.shaping_std:.3f} "
            f"| {s.successes_lambda_std:.3f} | {s.shaping_lambda_std:.3f} "
            f"| {s.lambda_correlation:+.3f} | {s.successes_per_episode:.2f} "
            f"| {round(s.shaping_per_episode, 2) + 0.0:+.2f} |"  # no "-0.00"
        )


if __name__ == "__main__":
    main()
