"""The paper's component and shaping ablations as one table, at the training load.

    python benchmarks/ablations.py --episodes 100 --out results/ablations

Rows: `coreenv_lab.ablations.ABLATIONS` (MARA, MARA-WLS, LARA-FM, LARA, MARA unshaped), each
played as `coreenv_lab.ablations.ABLATION_METHODS` names it: MARA-WLS and MARA unshaped are the
lab's ``coreenv_lab.methods:mara_wls`` and ``coreenv_lab.methods:mara_noshape`` (``pip install -e
lab``). Episodes are the sweep's (same rows file format, fingerprinted and resumable).
"""

from __future__ import annotations

from pathlib import Path

from coreenv_lab.ablations import ABLATION_METHODS, ablation_table
from mara_agents.cli.parser import CommandParser, add_arrival_prob
from mara_agents.sweep import METHODS, SweepConfig, SweepInputError, run_sweep


def parse_args(argv: list[str] | None = None) -> SweepConfig:
    """Parse and validate every option; a bad one exits with status 2 and one line saying why."""
    parser = CommandParser(prog="ablations.py", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--task-sets", nargs="+", default=list(SweepConfig.task_sets), help="task sets"
    )
    add_arrival_prob(parser, 0.04, old="--load")
    parser.add_argument("--episodes", type=int, default=100, help="episodes per cell")
    parser.add_argument("--workers", type=int, default=2, help="local worker processes")
    parser.add_argument(
        "--methods",
        nargs="+",
        default=list(ABLATION_METHODS.values()),
        help=f"rows: names {sorted(METHODS)} or module:Class (default: the ablation's)",
    )
    parser.add_argument("--out", type=Path, default=Path("results/ablations"), help="folder")
    args = parser.parse_args(argv)
    try:
        return SweepConfig.checked(
            arrival_prob=(args.arrival_prob,),
            task_sets=args.task_sets,
            methods=args.methods,
            episodes=args.episodes,
            workers=args.workers,
            out=args.out,
        )
    except SweepInputError as e:
        parser.error(str(e))


def main(argv: list[str] | None = None) -> None:
    config = parse_args(argv)
    table = ablation_table(run_sweep(config), config)
    (config.out / "ablations.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
