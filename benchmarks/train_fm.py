"""Train the flow-matching predictor, calibrate it on held-out folds, ship it.

    python benchmarks/train_fm.py --recipe broad  # the shipped recipe: 10 models, folded by kind
    python benchmarks/train_fm.py --no-calibrate  # one model, its raw sampled shares
    python benchmarks/train_fm.py --device cuda

A command line over `coreenv_lab.fm_training.folds.train_calibrated` (``--recipe`` picks a named
recipe of `FM_RECIPES`; the other options override its fields). It trains one model per fold —
per kind of the curve corpus for a recipe with a corpus (``loko_folds``), per ID family otherwise
(``lofo_folds``) — in ``--work/<fold>``, fits the `Calibration` on each fold's predictions for
the training runs of what it held out, then trains the model of everything the recipe names
(``--work/all``) and writes it with the calibration to ``--out``. Test runs and the RL and ViT
task sets are never read. Every model checkpoints to its folder every ``--every`` steps and a
rerun resumes; finished fold models are reused (also by ``python -m
coreenv_lab.commands.eval_predictors --protocol lofo/loko``).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from coreenv_lab.fm_training.folds import lofo_folds, loko_folds, train_calibrated
from mara_agents.fm_training.calibration_fit import REACH_EDGES
from mara_agents.fm_training.training import FM_RECIPES, train_fm
from mara_agents.predictors.flow import PRETRAINED


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", choices=sorted(FM_RECIPES), default="broad")
    parser.add_argument("--steps", type=int, help="default: the recipe's")
    parser.add_argument("--batch", type=int, help="default: the recipe's")
    parser.add_argument("--lr", type=float, help="default: the recipe's")
    parser.add_argument("--every", type=int, help="checkpoint and validation period")
    parser.add_argument("--device", help="default: the recipe's (cpu); cuda works")
    parser.add_argument("--seed", type=int, help="default: the recipe's")
    parser.add_argument("--runs", type=int, help="use only the first runs (smoke tests)")
    parser.add_argument(
        "--calibrate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit the calibration on held-out folds (one more model per kind or family)",
    )
    parser.add_argument(
        "--reach-bands",
        action="store_true",
        help=f"calibrate far targets apart (median sampled crossing >= {REACH_EDGES} batches); "
        "not the shipped predictor's (docs/predictors.md, Leave one kind out)",
    )
    parser.add_argument("--work", type=Path, help="default: results/fm/<recipe>")
    parser.add_argument("--out", type=Path, default=PRETRAINED)
    args = parser.parse_args(argv)
    if args.reach_bands and not args.calibrate:
        parser.error("--reach-bands is a calibration's: it needs --calibrate")
    if args.reach_bands and args.out.resolve() == PRETRAINED.resolve():
        parser.error(
            f"--reach-bands: the shipped predictor keeps one blend; give an --out other than "
            f"{PRETRAINED}"
        )
    overrides = {
        name: getattr(args, name)
        for name in ("steps", "batch", "lr", "every", "device", "seed", "runs")
        if getattr(args, name) is not None
    }
    try:
        args.config = dataclasses.replace(FM_RECIPES[args.recipe], **overrides)
    except ValueError as error:  # FMTrainConfig names the field and the value
        parser.error(str(error))
    args.work = args.work or Path("results/fm") / args.recipe
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.calibrate:
        folds = loko_folds if args.config.corpus is not None else lofo_folds
        edges = REACH_EDGES if args.reach_bands else ()
        predictor = train_calibrated(args.config, args.work, folds(args.config), reach_edges=edges)
    else:
        predictor = train_fm(args.config, args.work / "all").predictor
    predictor.save(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
