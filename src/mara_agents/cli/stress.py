"""The infeasible-task stress test (design §2) for every method: completion rate, mean and std.

    coreenv stress [--methods fifo edf lara mara oracle] [--episodes 10]

The scenario is the same in every episode; only a stochastic scheduler varies across seeds.
"""

from __future__ import annotations

from coreenv.curves import TASK_SETS
from mara_agents.cli.parser import METHODS_HELP, CommandParser, count, methods_listing
from mara_agents.sweep import DEFAULT_METHODS, SweepInputError, stress_table, validate


def main(argv: list[str] | None = None) -> None:
    """Check the names, then print the stress table row by row as each method finishes."""
    parser = CommandParser(
        prog="coreenv stress", description=__doc__.splitlines()[0], epilog=methods_listing()
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        default=list(DEFAULT_METHODS),
        help=METHODS_HELP,
    )
    parser.add_argument("--episodes", type=count, default=10, help="episodes per method")
    parser.add_argument(
        "--task-set",
        default="id",
        help=f"where the 20 tasks' curves come from: {sorted(TASK_SETS)} or a bank .npz",
    )
    args = parser.parse_args(argv)
    try:
        validate(args.methods, [args.task_set], [])
    except SweepInputError as e:
        parser.error(str(e))
    for line in stress_table(args.methods, args.episodes, args.task_set):
        print(line, flush=True)


if __name__ == "__main__":
    main()
