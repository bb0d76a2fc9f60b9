r"""Judge every predictor by one query protocol on runs it never saw (design §4 metrics).

    python -m coreenv_lab.commands.eval_predictors --out results/predictors
    python -m coreenv_lab.commands.eval_predictors --protocol lofo --out results/lofo
    python -m coreenv_lab.commands.eval_predictors --protocol loko --recipe broad \
        --out results/loko
    python -m coreenv_lab.commands.eval_predictors --queries user --bank my_runs.csv \
        --out results/mine
    python -m coreenv_lab.commands.eval_predictors --protocol history --kind-fields family \
        --out results/history

The lab's full command line of ``coreenv eval-predictors`` (which keeps the standard protocol
and ``--bank``): every option it had before 0.3.0, the lab's predictors
(`coreenv_lab.predictors.LAB_PREDICTORS`) among ``--predictors``.

``standard``: task sets ``id`` (the ID test runs), ``rl_ood`` and ``vit_ood``, each predictor as
shipped (``--reference-fm PATH`` also scores another FM checkpoint in the same run, e.g. a
release's, so that latencies compare on one machine). ``lofo`` (leave one family out): for each
ID family, an FM trained by the chosen recipe on the other families' training runs only, judged
with WLS on the held-out family's test runs. ``loko`` (leave one kind out; a recipe with a
corpus): for each kind of training in the curve corpus, an FM trained without that kind, judged
with WLS on that kind's test runs. ``history``: the environment queries of each task set asked
again with a history of ``k`` finished tasks of the query's kind (``--kind-fields``, default
family; other runs of the set, never the query's own) and as many of other kinds, for each ``k``
of ``--finished`` (`coreenv_lab.predictor_eval.history`); writes ``history.csv`` and
``history.md``. Fold predictors are read through a calibration fitted on the
other folds (``--no-calibrate``: raw); fold models go to ``--work`` (reused from there, or
resumed: ``benchmarks/train_fm.py`` trains the same), never into the package. The protocol is
`mara_agents.predictor_eval.queries` (fixed seed): capped MAE of remaining batches, accuracy of
"crosses within the budget", calibration error and ROC AUC of ``p_success`` and the latency of
one call estimating 8 tasks, on one CPU thread. ``--queries`` chooses how every table's queries
are drawn: ``environment`` (targets as the environment draws tasks) or ``user`` (a loss the run
reaches later, asked at a prefix of 20-300 batches). ``--bank PATH ...`` also scores the
predictors on your own curves (a CSV of training logs that `coreenv.curves.bank_from_csv` reads,
or a ``.npz`` bank), one group of rows per file, named after its stem; with ``--bank`` only the
banks are scored unless ``--task-sets`` is given too (``lofo``/``loko`` still score their
folds). ``--queries environment user`` asks both kinds of queries in one run (one table each).
Writes ``predictors.csv`` (a row per group, predictor and kind of queries), ``predictors.md`` and
a reliability plot, ``reliability.png`` (``reliability-<queries>.png`` for each of several), to
``--out``.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from pathlib import Path

import torch

from coreenv.curves import TASK_SETS, named_task_set
from coreenv_lab.fm_training.folds import (
    cross_fitted_calibrations,
    lofo_folds,
    loko_folds,
    score_folds,
)
from coreenv_lab.predictor_eval.history import HistoryConfig, run_kinds, score_history
from coreenv_lab.predictor_eval.history_report import history_table, write_history
from coreenv_lab.predictors import LAB_PREDICTORS, make_predictor
from mara_agents.cli.eval_predictors import DEFAULT_TASK_SETS, groups, query_config, read_banks
from mara_agents.cli.parser import CommandParser, count, whole
from mara_agents.fm_training.calibration_fit import REACH_EDGES
from mara_agents.fm_training.corpus import corpus_kinds, load_corpus
from mara_agents.fm_training.training import FM_RECIPES
from mara_agents.predictor_eval.queries import (
    TARGETS,
    QueryConfig,
    score_banks,
)
from mara_agents.predictor_eval.report import Results, report, score_shipped, write_reports
from mara_agents.predictors import HORIZON, POLICY_PREDICTORS

PROG = "python -m coreenv_lab.commands.eval_predictors"

DEFAULT_RECIPE = "broad"
"""``--recipe`` unless told; its families and corpus kinds are those ``--help`` lists."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options, with every name and bank checked before any work; bad input exits 2.

    ``args.banks`` holds the ``--bank`` files read as banks, named after their stems.
    """
    parser = CommandParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--protocol",
        choices=[*PROTOCOLS, "history"],
        default="standard",
        help="standard: predictors as shipped; lofo/loko: folds leaving out one family/kind; "
        "history: queries asked with k finished tasks of their kind",
    )
    parser.add_argument(
        "--queries",
        nargs="+",
        choices=TARGETS,
        default=["environment"],
        help="how queries are drawn: as the environment draws tasks, or as a user asks of a run "
        "(both: one table each, fold models and calibrations shared)",
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
        help="also score your own curves: a CSV of training logs or a .npz bank (repeatable)",
    )
    parser.add_argument(
        "--predictors",
        nargs="+",
        default=["wls", "fm"],
        choices=sorted({**POLICY_PREDICTORS, **LAB_PREDICTORS}),
        help="standard/history: the predictors to score",
    )
    parser.add_argument(
        "--kind-fields",
        nargs="+",
        metavar="FIELD",
        help=f"history: description fields naming a run's kind; default "
        f"{' '.join(HistoryConfig.kind_fields)}",
    )
    parser.add_argument(
        "--finished",
        nargs="+",
        type=whole,
        metavar="K",
        help=f"history: numbers of finished tasks of the query's kind; default "
        f"{' '.join(map(str, HistoryConfig.finished))}",
    )
    parser.add_argument(
        "--per-curve", type=count, default=QueryConfig.per_curve, help="queries per recorded run"
    )
    parser.add_argument("--horizon", type=count, default=HORIZON, help="H, the MAE cap")
    parser.add_argument(
        "--recipe",
        choices=sorted(FM_RECIPES),
        default=DEFAULT_RECIPE,
        help="lofo/loko: the FM recipe (loko needs one with a corpus)",
    )
    default = FM_RECIPES[DEFAULT_RECIPE]
    id_families = list(named_task_set(default.task_set).families)
    parser.add_argument(
        "--families",
        nargs="+",
        help=f"lofo: only these folds, ID families {id_families} (calibration still uses every "
        "fold)",
    )
    parser.add_argument(
        "--kinds",
        nargs="+",
        help=f"loko: only these folds, kinds of the recipe's corpus ({default.corpus} corpus: "
        f"{sorted(set(corpus_kinds(load_corpus(default.corpus))))}; calibration still uses every "
        "fold)",
    )
    parser.add_argument(
        "--steps", type=count, help="lofo/loko: training steps instead of the recipe's"
    )
    parser.add_argument(
        "--runs", type=int, help="lofo/loko: train on the first runs only (smoke tests)"
    )
    parser.add_argument(
        "--calibrate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="lofo/loko: read each fold through a calibration fitted on the other folds",
    )
    parser.add_argument(
        "--reach-bands",
        action="store_true",
        help="lofo/loko: the calibration also blends far targets apart (fit_calibration's "
        "reach_edges = REACH_EDGES); not the shipped predictor's",
    )
    parser.add_argument(
        "--work", type=Path, help="lofo/loko: fold models; default results/fm/<recipe>"
    )
    parser.add_argument(
        "--reference-fm",
        type=Path,
        help="standard: also score this FM checkpoint, as fm_reference (e.g. an earlier release's)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("results/predictors"), help="the report's folder"
    )
    args = parser.parse_args(argv)
    if args.reference_fm is not None and not args.reference_fm.is_file():
        parser.error(f"--reference-fm: no checkpoint at {args.reference_fm}")
    if args.runs is not None and args.runs < 2:
        parser.error(f"--runs must be >= 2, got {args.runs}")
    if args.task_sets is None:
        args.task_sets = [] if args.bank else list(DEFAULT_TASK_SETS)
    for task_set in args.task_sets:
        try:
            named_task_set(task_set)
        except Exception as error:  # the task-set registry's own message names the choices
            parser.error(f"--task-sets: {error}")
    families = named_task_set(FM_RECIPES[args.recipe].task_set).families
    unknown = sorted(set(args.families or ()) - set(families))
    if unknown:
        parser.error(f"--families: {unknown} are not ID families; choose from {list(families)}")
    check_fold_options(parser, args)
    if args.protocol == "history":
        args.history = history_config(parser, args)
    if args.protocol == "loko":
        corpus = FM_RECIPES[args.recipe].corpus
        if corpus is None:
            with_corpus = sorted(name for name, r in FM_RECIPES.items() if r.corpus is not None)
            parser.error(
                f"--protocol loko: recipe {args.recipe!r} has no corpus; use {with_corpus}"
            )
        try:
            kinds = set(corpus_kinds(load_corpus(corpus)))
        except FileNotFoundError as error:
            parser.error(f"--protocol loko: {error}")
        unknown = sorted(set(args.kinds or ()) - kinds)
        if unknown:
            parser.error(
                f"--kinds: {unknown} are not kinds of the corpus; choose from {sorted(kinds)}"
            )
    args.banks = {}
    for targets in args.queries:
        args.banks = read_banks(parser, args.bank, query_config(args, targets))
    clash = sorted(set(args.banks) & set(args.task_sets))
    if clash:
        parser.error(f"--bank: {clash} would share rows with the task set(s) of that name")
    return args


def check_fold_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse options that the chosen protocol would ignore, and a recipe it cannot fold."""
    ignored = {
        "--families": args.families is not None and args.protocol != "lofo",
        "--kinds": args.kinds is not None and args.protocol != "loko",
        "--reference-fm": args.reference_fm is not None and args.protocol != "standard",
        "--reach-bands": args.reach_bands and args.protocol not in ("lofo", "loko"),
        "--predictors": args.protocol in ("lofo", "loko") and args.predictors != ["wls", "fm"],
        "--kind-fields": args.kind_fields is not None and args.protocol != "history",
        "--finished": args.finished is not None and args.protocol != "history",
        "--bank": bool(args.bank) and args.protocol == "history",
        "--queries user": "user" in args.queries and args.protocol == "history",
    }
    for option, refused in ignored.items():
        if refused:
            parser.error(f"{option} does not apply to --protocol {args.protocol}")
    if args.reach_bands and not args.calibrate:
        parser.error("--reach-bands shapes the calibration: it does not apply with --no-calibrate")
    if args.protocol == "lofo" and FM_RECIPES[args.recipe].corpus is not None:
        without = sorted(name for name, r in FM_RECIPES.items() if r.corpus is None)
        parser.error(
            f"--protocol lofo: recipe {args.recipe!r} trains on the corpus, whose runs share "
            f"models and datasets with the ID families; fold it by kind (--protocol loko) or "
            f"use one of {without}"
        )


def history_config(parser: argparse.ArgumentParser, args: argparse.Namespace) -> HistoryConfig:
    """The history protocol's config, each option checked in turn.

    Every task set must give each of its runs a kind (every field of ``--kind-fields``).
    """
    config = HistoryConfig(queries=query_config(args, "environment"))
    for option, field, value in (
        ("--kind-fields", "kind_fields", args.kind_fields),
        ("--finished", "finished", args.finished),
    ):
        try:
            config = dataclasses.replace(config, **{field: tuple(value or getattr(config, field))})
        except ValueError as error:
            parser.error(f"{option}: {error}")
    for task_set in args.task_sets:
        try:
            run_kinds(named_task_set(task_set), config.kind_fields)
        except ValueError as error:
            parser.error(f"--kind-fields: {error}")
    return config


def history(args: argparse.Namespace) -> str:
    """Every predictor at every k of the history protocol; write its report, return its table."""
    banks = {name: named_task_set(name) for name in args.task_sets}
    predictors = {name: make_predictor(name) for name in args.predictors}
    results = score_history(banks, predictors, args.history, args.horizon)
    write_history(results, args.out)
    return history_table(results)


def standard(args: argparse.Namespace, config: QueryConfig) -> Results:
    """Every predictor (and the reference FM, if given), on every task set and bank."""
    predictors = {name: make_predictor(name) for name in args.predictors}
    if args.reference_fm is not None:
        from mara_agents.predictors.flow import FMPredictor  # torch: only for a checkpoint

        predictors["fm_reference"] = FMPredictor.pretrained(args.reference_fm)
    return score_banks(groups(args.task_sets, args), predictors, config, args.horizon)


def folded(args: argparse.Namespace, config: QueryConfig) -> Results:
    """Every fold of the recipe (FM and WLS), then shipped FM and WLS on OOD sets and banks.

    ``lofo`` folds leave out one ID family, ``loko`` folds one kind of the recipe's corpus.
    """
    recipe = FM_RECIPES[args.recipe]
    recipe = dataclasses.replace(
        recipe, steps=args.steps or recipe.steps, runs=args.runs or recipe.runs
    )
    work = args.work or Path("results/fm") / args.recipe
    folds = lofo_folds(recipe) if args.protocol == "lofo" else loko_folds(recipe)
    if args.calibrate and args.calibrations is None:  # one fit serves every query protocol
        edges = REACH_EDGES if args.reach_bands else ()
        args.calibrations = cross_fitted_calibrations(folds, work, reach_edges=edges)
    only = args.families if args.protocol == "lofo" else args.kinds
    results = score_folds(folds, work, config, args.calibrations, only)
    ood = [task_set for task_set in args.task_sets if task_set != "id"]
    return {**results, **score_shipped(groups(ood, args), ["wls", "fm"], config, args.horizon)}


PROTOCOLS: dict[str, Callable[[argparse.Namespace, QueryConfig], Results]] = {
    "standard": standard,
    "lofo": folded,
    "loko": folded,
}
"""``--protocol``: each a function of the parsed arguments and the query config."""


def main(argv: list[str] | None = None) -> None:
    """Score the predictors for each kind of queries; print and write the report to --out."""
    args = parse_args(argv)
    args.calibrations = None  # fitted by the first fold protocol that needs them
    torch.set_num_threads(1)  # latency on one core
    if args.protocol == "history":
        print(history(args), flush=True)
        return
    tables = {}
    for targets in args.queries:
        config = query_config(args, targets)
        results = PROTOCOLS[args.protocol](args, config)
        tables[targets] = (results, report(results, config, folded=args.protocol != "standard"))
        print(tables[targets][1], flush=True)
    write_reports(tables, args.out)


if __name__ == "__main__":
    main()
