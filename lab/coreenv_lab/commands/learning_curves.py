r"""Learning curves of MARA training runs, the difference of two recipes, and the last policies.

    python -m coreenv_lab.commands.learning_curves \
        --arm shaped results/scratch/shaped_1 results/scratch/shaped_2 results/scratch/shaped_3 \
        --arm unshaped results/scratch/unshaped_1 results/scratch/unshaped_2 \
            results/scratch/unshaped_3 --test-episodes 40 --plot docs/img/scratch_curves.png

Each ``--arm LABEL RUN…`` is one recipe's runs (work folders of ``coreenv train-mara`` or
``python -m coreenv_lab.commands.train_mara``), in training-seed order; before 0.3.0 this was
``coreenv learning-curves``. Prints, from each run's ``history.json``: the completion on the
fixed selection episodes at every evaluation (mean and spread over the arm's runs); each run's
final, best and area under the curve and its final completion against LARA's on the same
selection episodes; and, with two arms or more, the first − the second paired by seed (the runs
in the order given) and by selection episode. With ``--test-episodes N`` each run's last policy
and LARA play the same N episodes of ``--task-set`` at ``--arrival-prob`` from seed 1,000,000
(the sweep's evaluation seeds, never trained on).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coreenv.curves import TASK_SETS
from coreenv_lab.training.curves import read_curve
from coreenv_lab.training.curves_report import (
    curve_table,
    last_policies_table,
    paired_table,
    plot_arms,
    runs_table,
)
from mara_agents import seeds
from mara_agents.cli.parser import CommandParser, add_arrival_prob
from mara_agents.evaluation import completion_rates
from mara_agents.schedulers import LARA
from mara_agents.training import TRAINING_ENV

PROG = "python -m coreenv_lab.commands.learning_curves"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, every run folder and the pairing of the first two arms checked."""
    parser = CommandParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--arm",
        nargs="+",
        action="append",
        required=True,
        metavar="LABEL RUN",
        help="a recipe's label and its training runs' work folders; repeatable",
    )
    parser.add_argument(
        "--test-episodes",
        type=int,
        default=0,
        help="episodes per last policy against LARA: 0 (no test) or >= 2",
    )
    parser.add_argument(
        "--task-set", choices=sorted(TASK_SETS), default="id", help="task set of the test"
    )
    add_arrival_prob(parser, 0.04, old="--load", help="arrival probability p of the test")
    parser.add_argument("--plot", type=Path, default=None, help="write the curves to this PNG")
    parser.add_argument(
        "--selection-seed",
        type=int,
        default=seeds.SELECTION,
        help="first selection episode of the runs (MARATrainConfig.selection_seed)",
    )
    parser.add_argument(
        "--selection-task-set",
        choices=sorted(TASK_SETS),
        default=TRAINING_ENV["task_set"],
        help="task set the runs trained and were selected on (MARATrainConfig.task_set)",
    )
    args = parser.parse_args(argv)
    for arm in args.arm:
        if len(arm) < 2:
            parser.error(f"--arm {arm[0]}: give a label and at least one run folder")
        for run in arm[1:]:
            if not (Path(run) / "history.json").is_file():
                parser.error(f"--arm {arm[0]}: {run} has no history.json (not a train_mara run)")
    if len(args.arm) >= 2 and len(args.arm[0]) != len(args.arm[1]):
        parser.error(
            f"--arm {args.arm[0][0]} has {len(args.arm[0]) - 1} runs and --arm {args.arm[1][0]} "
            f"{len(args.arm[1]) - 1}: the first two arms are paired run by run"
        )
    if args.test_episodes < 0:
        parser.error(f"--test-episodes must be >= 0, got {args.test_episodes}")
    if args.test_episodes == 1:
        parser.error("--test-episodes must be 0 or >= 2 (a paired standard error needs two)")
    return args


def main(argv: list[str] | None = None) -> None:
    """Print the curves, the runs, the paired difference and the test of the last policies."""
    args = parse_args(argv)
    arms = {arm[0]: [read_curve(Path(run)) for run in arm[1:]] for arm in args.arm}
    episodes = next(iter(arms.values()))[0].rates.shape[1]
    print("\n".join(curve_table(arms)))
    selection = {**TRAINING_ENV, "task_set": args.selection_task_set}
    reference = completion_rates(LARA(), episodes, args.selection_seed, **selection)
    print(f"\nLARA on the same selection episodes: {100 * reference.mean():.1f}\n")
    print("\n".join(runs_table(arms, reference)))
    if len(arms) >= 2:
        print("\n" + "\n".join(paired_table(arms)))
    if args.test_episodes:
        runs = {arm[0]: [Path(run) for run in arm[1:]] for arm in args.arm}
        env = {"task_set": args.task_set, "arrival_prob": args.arrival_prob}
        print("\n" + "\n".join(last_policies_table(runs, args.test_episodes, env)))
    if args.plot is not None:
        plot_arms(arms, float(reference.mean()), args.plot)
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
