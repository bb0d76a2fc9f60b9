r"""Learning curves of MARA training runs, the difference of two recipes, and the last policies.

    coreenv learning-curves \
        --arm shaped results/scratch/shaped_1 results/scratch/shaped_2 results/scratch/shaped_3 \
        --arm unshaped results/scratch/unshaped_1 results/scratch/unshaped_2 \
            results/scratch/unshaped_3 --test-episodes 40 --plot docs/img/scratch_curves.png

Each ``--arm LABEL RUN…`` is one recipe's runs (``train_mara`` work folders), in training-seed
order. Prints, from each run's ``history.json``: the completion on the fixed selection episodes at
every evaluation (mean and spread over the arm's runs); each run's final, best and area under the
curve and its final completion against LARA's on the same selection episodes; and, with two
arms or more, the first − the second paired by seed (the runs in the order
given) and by selection episode. With
``--test-episodes N`` each run's last policy and LARA play the same N episodes of ``--task-set``
at ``--arrival-prob`` from seed 1,000,000 (the sweep's evaluation seeds, never trained on).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from coreenv.curves import TASK_SETS
from mara_agents import seeds
from mara_agents.cli.parser import CommandParser, add_arrival_prob
from mara_agents.evaluation import completion_rates, paired_difference
from mara_agents.schedulers import LARA
from mara_agents.training import TRAINING_ENV
from mara_agents.training.curves import last_policies, paired_runs, read_curve


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, every run folder and the pairing of the first two arms checked."""
    parser = CommandParser(prog="coreenv learning-curves", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--arm",
        nargs="+",
        action="append",
        required=True,
        metavar="LABEL RUN",
        help="a recipe's label and its train-mara work folders; repeatable",
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


def spread(values: np.ndarray) -> str:
    """Percent mean ± sd over runs, with the range."""
    values = 100 * np.asarray(values)
    sd = values.std(ddof=1) if values.size > 1 else 0.0
    return f"{values.mean():.1f} ± {sd:.1f} ({values.min():.1f}–{values.max():.1f})"


def main(argv: list[str] | None = None) -> None:
    """Print the curves, the runs, the paired difference and the test of the last policies."""
    args = parse_args(argv)
    arms = {arm[0]: [read_curve(Path(run)) for run in arm[1:]] for arm in args.arm}
    episodes = next(iter(arms.values()))[0].rates.shape[1]
    print(f"## Completion (%) on the {episodes} selection episodes, mean ± sd over runs (range)\n")
    points = min(len(c.steps) for curves in arms.values() for c in curves)
    print("| evaluation | steps (M) | " + " | ".join(arms) + " |")
    print("|---|---|" + "---|" * len(arms))
    for i in range(points):
        steps = np.mean([c.steps[i] for curves in arms.values() for c in curves]) / 1e6
        cells = [spread([c.means[i] for c in curves]) for curves in arms.values()]
        print(f"| {i} | {steps:.2f} | " + " | ".join(cells) + " |")
    selection = {**TRAINING_ENV, "task_set": args.selection_task_set}
    reference = completion_rates(LARA(), episodes, args.selection_seed, **selection)
    print(f"\nLARA on the same selection episodes: {100 * reference.mean():.1f}")
    print("\n## Runs\n")
    print("| arm | run | steps (M) | final | best | last − best | area | final − LARA (± SE) |")
    print("|---|---|---|---|---|---|---|---|")
    for label, curves in arms.items():
        for c in curves:
            gain, se = paired_difference(reference, c.rates[-1])
            print(
                f"| {label} | {c.name} | {c.steps[-1] / 1e6:.2f} | {100 * c.final:.1f} | "
                f"{100 * c.best:.1f} | {100 * (c.final - c.best):+.1f} | "
                f"{100 * c.area().mean():.1f} | {100 * gain:+.2f} ± {100 * se:.2f} |"
            )
    if len(arms) >= 2:
        (first, a), (second, b) = list(arms.items())[:2]
        print(f"\n## {first} − {second}, paired by seed and selection episode (points)\n")
        pairs = " | ".join(f"pair {i + 1}" for i in range(len(a)))
        print(f"| measure | {pairs} | mean ± SE over seeds |")
        print("|---|" + "---|" * (len(a) + 1))
        for measure in ("final", "area"):
            d = paired_runs(a, b, measure)
            cells = " | ".join(
                f"{100 * m:+.2f} ± {100 * s:.2f}" for m, s in zip(d.per_seed, d.per_seed_se)
            )
            print(f"| {measure} | {cells} | {100 * d.mean:+.2f} ± {100 * d.se:.2f} |")
    if args.test_episodes:
        env = {"task_set": args.task_set, "arrival_prob": args.arrival_prob}
        n = args.test_episodes
        print(f"\n## Last policies on {args.task_set} at p = {args.arrival_prob}: {n} episodes\n")
        lara = completion_rates(LARA(), n, seeds.EVALUATION, **env)
        print(f"LARA: {100 * lara.mean():.1f}\n")
        print("| arm | run | completion | − LARA (paired ± SE) |")
        print("|---|---|---|---|")
        for arm in args.arm:
            label, runs = arm[0], [Path(run) for run in arm[1:]]
            for run, policy in zip(runs, last_policies(runs)):
                rates = completion_rates(policy, n, seeds.EVALUATION, **env)
                gain, se = paired_difference(lara, rates)
                print(
                    f"| {label} | {run.name} | {100 * rates.mean():.1f} | "
                    f"{100 * gain:+.2f} ± {100 * se:.2f} |"
                )
    if args.plot is not None:
        plot(arms, float(reference.mean()), args.plot)
        print(f"\nplot: {args.plot}")


def plot(arms: dict, lara: float, path: Path) -> None:
    """Each arm's runs (thin) and their mean (thick) against environment steps; LARA dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for index, (label, curves) in enumerate(arms.items()):
        colour = f"C{index % 10}"  # matplotlib's colour cycle
        for c in curves:
            axes.plot(c.steps / 1e6, 100 * c.means, color=colour, alpha=0.35, linewidth=1)
        points = min(len(c.steps) for c in curves)
        steps = np.mean([c.steps[:points] for c in curves], axis=0) / 1e6
        means = np.mean([c.means[:points] for c in curves], axis=0)
        axes.plot(steps, 100 * means, color=colour, linewidth=2.5, label=label)
    axes.axhline(100 * lara, color="black", linestyle="--", linewidth=1, label="LARA")
    axes.set_xlabel("environment steps (millions)")
    axes.set_ylabel("completion on selection episodes (%)")
    axes.grid(alpha=0.3)
    axes.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
