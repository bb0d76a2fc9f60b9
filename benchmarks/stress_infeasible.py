"""The infeasible-task stress test (design §2) for every method: completion rate, mean and std.

    python benchmarks/stress_infeasible.py [--methods fifo edf lara mara oracle] [--episodes 10]

The scenario is the same in every episode; only a stochastic scheduler varies across seeds.
"""

from __future__ import annotations

import argparse

from coreenv.curves import TASK_SETS
from mara_agents import evaluate
from mara_agents.sweep import (
    DEFAULT_METHODS,
    EVAL_SEED_BASE,
    METHODS,
    SweepInputError,
    make_scheduler,
    validate,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        default=DEFAULT_METHODS,
        help=f"schedulers: names {sorted(METHODS)} or module:Class",
    )
    parser.add_argument("--episodes", type=int, default=10, help="episodes per method")
    parser.add_argument(
        "--task-set",
        default="id",
        help=f"where the 20 tasks' curves come from: {sorted(TASK_SETS)} or a bank .npz",
    )
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be >= 1.")
    try:
        validate(args.methods, [args.task_set], [])
    except SweepInputError as e:
        parser.error(str(e))
    print(f"Infeasible-task stress test ({args.episodes} episodes; bound 65%)\n")
    print("| method | completion rate (%) | std | successes | invalid actions / episode |")
    print("|---|---|---|---|---|")
    for method in args.methods:
        result = evaluate(
            make_scheduler(method),
            args.episodes,
            EVAL_SEED_BASE,
            scenario="infeasible_stress",
            task_set=args.task_set,
        )
        print(
            f"| {method} | {100 * result['completion_rate']:.1f} | "
            f"{100 * result['completion_rate_std']:.1f} | {result['successes']:.1f} | "
            f"{result['conflicts']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
