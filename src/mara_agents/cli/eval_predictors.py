"""Judge the loss predictors on runs they never saw, or on your own curves (design §4 metrics).

    coreenv eval-predictors --out results/predictors
    coreenv eval-predictors --bank my_runs.csv --out results/mine

Task sets ``id`` (the ID test runs), ``rl_ood`` and ``vit_ood`` by default; ``--bank PATH ...``
scores the predictors on your own curves instead (a CSV of training logs that
`coreenv.curves.bank_from_csv` reads, or a ``.npz`` bank), one group of rows per file, named after
its stem (``--task-sets`` adds named sets beside them). The protocol is
`mara_agents.predictor_eval.queries` (fixed seed): capped MAE of remaining batches, accuracy of
"crosses within the budget", calibration error and ROC AUC of ``p_success`` and the latency of
one call estimating 8 tasks, on one CPU thread. ``--queries`` chooses how queries are drawn:
``environment`` (targets as the environment draws tasks) or ``user`` (a loss the run reaches
later, asked at a prefix of 20-300 batches); both give one table each. Writes
``predictors.csv``, ``predictors.md`` and a reliability plot (``reliability.png``) to ``--out``.
The studies' protocols (folds leaving a family or a kind out, histories) are the lab's
(``python -m coreenv_lab.commands.eval_predictors`` in a clone).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from coreenv import BankError
from coreenv.curves import TASK_SETS, CurveBank, named_task_set
from mara_agents.cli.parser import CommandParser, count
from mara_agents.predictor_eval.queries import TARGETS, QueryConfig, make_queries, read_bank
from mara_agents.predictor_eval.report import Results, report, score_shipped, write_reports
from mara_agents.predictors import HORIZON, PREDICTORS

DEFAULT_TASK_SETS = ["id", "rl_ood", "vit_ood"]
"""Scored when neither ``--task-sets`` nor ``--bank`` is given."""



def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options, with every name and bank checked before any work; bad input exits 2.

    ``args.banks`` holds the ``--bank`` files read as banks, named after their stems.
    """
    parser = CommandParser(prog="coreenv eval-predictors", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--queries",
        nargs="+",
        choices=TARGETS,
        default=["environment"],
        help="how queries are drawn: as the environment draws tasks, or as a user asks of a run",
    )
    parser.add_argument(
        "--task-sets",
        nargs="+",
        help=f"named task sets {sorted(TASK_SETS)}; default {' '.join(DEFAULT_TASK_SETS)}, none "
        "when --bank is given",
    )
    parser.add_argument(
        "--bank",
        nargs="+",
        action="extend",
        type=Path,
        default=[],
        metavar="PATH",
        help="score your own curves: a CSV of training logs or a .npz bank (repeatable)",
    )
    parser.add_argument(
        "--predictors",
        nargs="+",
        default=sorted(PREDICTORS),
        choices=sorted(PREDICTORS),
        help="the predictors to score (default: both)",
    )
    parser.add_argument(
        "--per-curve", type=count, default=QueryConfig.per_curve, help="queries per recorded run"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("results/predictors"), help="the report's folder"
    )
    args = parser.parse_args(argv)
    if args.task_sets is None:
        args.task_sets = [] if args.bank else list(DEFAULT_TASK_SETS)
    for task_set in args.task_sets:
        try:
            named_task_set(task_set)
        except Exception as error:  # the task-set registry's own message names the choices
            parser.error(f"--task-sets: {error}")
    args.banks = {}
    for targets in args.queries:
        args.banks = read_banks(parser, args.bank, query_config(args, targets))
    clash = sorted(set(args.banks) & set(args.task_sets))
    if clash:
        parser.error(f"--bank: {clash} would share rows with the task set(s) of that name")
    return args


def read_banks(
    parser: argparse.ArgumentParser, paths: list[Path], config: QueryConfig
) -> dict[str, CurveBank]:
    """Each ``--bank`` file as a bank named after its stem; refuse a bad file in one line."""
    banks: dict[str, CurveBank] = {}
    for path in paths:
        try:
            bank = read_bank(path)
        except BankError as error:
            parser.error(f"--bank {path}: {' '.join(str(error).split())}")
        if path.stem in banks:
            parser.error(f"--bank {path}: another bank is named {path.stem!r}; rename one file")
        if len(make_queries(bank, config)) == 0:
            parser.error(
                f"--bank {path}: no query can be drawn on its curves with --queries "
                f"{config.targets} (curves too short?)"
            )
        banks[path.stem] = bank
    return banks


def query_config(args: argparse.Namespace, targets: str) -> QueryConfig:
    """The queries one table asks."""
    return QueryConfig(per_curve=args.per_curve, targets=targets)


def groups(task_sets: list[str], args: argparse.Namespace) -> dict[str, CurveBank]:
    """The named task sets, then the user's banks: each a group of rows of the report."""
    return {**{name: named_task_set(name) for name in task_sets}, **args.banks}


def standard(args: argparse.Namespace, config: QueryConfig) -> Results:
    """Every predictor as shipped, on every task set and bank."""
    return score_shipped(groups(args.task_sets, args), args.predictors, config, HORIZON)


def main(argv: list[str] | None = None) -> None:
    """Score the predictors for each kind of queries; print and write the report to --out."""
    args = parse_args(argv)
    torch.set_num_threads(1)  # latency on one core
    tables = {}
    for targets in args.queries:
        config = query_config(args, targets)
        results = standard(args, config)
        tables[targets] = (results, report(results, config, folded=False))
        print(tables[targets][1], flush=True)
    write_reports(tables, args.out)


if __name__ == "__main__":
    main()
