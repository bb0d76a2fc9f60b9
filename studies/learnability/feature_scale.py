"""The scale of every observed feature at a scheduler's decisions (docs/mara.md).

    python studies/learnability/feature_scale.py               # MARA-WLS, 20 episodes
    python studies/learnability/feature_scale.py --method mara --episodes 50

``--method`` is a sweep method: a name, or ``module:function`` such as the default, the lab's
``coreenv_lab.methods:mara_wls`` (``pip install -e lab``). The method plays ``--episodes``
training-seed episodes (from ``--seed``) in the event form, with the predictor it declares; at
each decision the global features and the features of the occupied slots are gathered
(`coreenv_lab.training.observed.feature_scales`). The table gives each one's range, median,
99th percentile and the share of its values at ±OBS_BOUND.
"""

from __future__ import annotations

import argparse

from coreenv import Decisions, make_config
from coreenv.curves import TASK_SETS
from coreenv.layout import OBS_BOUND
from coreenv_lab.training.observed import feature_scales
from mara_agents.cli.parser import CommandParser, add_arrival_prob, count
from mara_agents.sweep import SweepInputError, make_scheduler, validate


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = CommandParser(prog="feature_scale.py", description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="coreenv_lab.methods:mara_wls")
    parser.add_argument("--episodes", type=count, default=20)
    parser.add_argument("--seed", type=int, default=900_000, help="first episode (training seeds)")
    parser.add_argument("--task-set", default="id_train", choices=sorted(TASK_SETS))
    add_arrival_prob(parser, 0.04, old="--load")
    parser.add_argument("--hold", type=count, default=8, help="most steps a decision is held")
    args = parser.parse_args(argv)
    try:
        validate([args.method], [args.task_set], [args.arrival_prob])
    except SweepInputError as e:
        parser.error(str(e))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config = make_config(None, task_set=args.task_set, arrival_prob=args.arrival_prob)
    seeds = range(args.seed, args.seed + args.episodes)
    scales = feature_scales(
        make_scheduler(args.method), config, seeds, Decisions(at="events", hold=args.hold)
    )
    print(
        f"{args.method}: {args.episodes} episodes of {args.task_set} at p = {args.arrival_prob} "
        f"from seed {args.seed}, decisions at events (hold {args.hold}); "
        "slot features of occupied slots\n"
    )
    print(f"| feature | min | median | 99th percentile | max | share at ±{OBS_BOUND:g} |")
    print("|---|---|---|---|---|---|")
    for s in scales:
        print(
            f"| {s.name} | {s.low:.3g} | {s.median:.3g} | {s.p99:.3g} | {s.high:.3g} "
            f"| {100 * s.at_bound:.1f}% |"
        )


if __name__ == "__main__":
    main()
