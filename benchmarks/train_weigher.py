"""Train the analog weigher: how far to trust each analog of a task's kind over the base.

    python benchmarks/train_weigher.py                       # the shipped one, about 2 minutes
    python benchmarks/train_weigher.py --epochs 5 --runs 60 --out /tmp/weigher.pt   # a smoke run

A command line over `coreenv_lab.fm_training.weigher.train_weigher`. Examples come from the
curve corpus's runs of kinds no task set plays, asked with 0-16 finished tasks of their family,
with and without reference runs; whole families are held out to keep the best epoch, and the
table compares the base alone, the fixed rule of ``fm_mara_analog`` and the weigher on them.
The weigher is written to ``--out`` (default: the lab's `checkpoints/analog_weigher.pt`,
`coreenv_lab.predictors.WEIGHER`, which ``fm_mara_learned`` reads).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch

from coreenv_lab.fm_training.weigher import WeigherTrainConfig, train_weigher
from coreenv_lab.predictors import LAB_PREDICTORS, WEIGHER
from mara_agents.predictors import POLICY_PREDICTORS


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = WeigherTrainConfig()
    parser.add_argument(
        "--base",
        default=defaults.base,
        choices=sorted({**POLICY_PREDICTORS, **LAB_PREDICTORS}),
        help="the predictor weighed (a name of coreenv_lab.predictors.make_predictor)",
    )
    parser.add_argument(
        "--sources", nargs="+", default=list(defaults.sources), help="who asks the queries"
    )
    parser.add_argument("--episodes", type=int, default=defaults.episodes, help="per group")
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--batch", type=int, default=defaults.batch)
    parser.add_argument("--lr", type=float, default=defaults.lr)
    parser.add_argument("--validation-share", type=float, default=defaults.validation_share)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--runs", type=int, help="use only the first corpus runs (smoke tests)")
    parser.add_argument("--out", type=Path, default=WEIGHER)
    args = parser.parse_args(argv)
    fields = [field.name for field in dataclasses.fields(WeigherTrainConfig)]
    try:
        given = {name: getattr(args, name) for name in fields if hasattr(args, name)}
        args.config = WeigherTrainConfig(**{**given, "sources": tuple(args.sources)})
    except ValueError as error:  # WeigherTrainConfig names the field and the value
        parser.error(str(error))
    if not args.out.parent.is_dir():
        parser.error(f"--out: no folder {args.out.parent}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(1)
    run = train_weigher(args.config)
    print(f"kept epoch {run.epoch}; held-out families: {', '.join(run.validation_families)}")
    print("capped MAE (batches) on the held-out families")
    columns = ("asked by", "reference", "k", "queries", "base", "rule", "weigher")
    widths = (9, 9, 3, 7, 7, 7, 7)
    print(" ".join(f"{name:>{width}}" for name, width in zip(columns, widths)))
    for (source, reference, k), scores in run.report.items():
        cells = " ".join(f"{scores[name]:7.1f}" for name in ("base", "rule", "weigher"))
        counts = f"{scores['queries']:7.0f}"
        print(f"{source:>9} {'yes' if reference else 'no':>9} {k:>3} {counts} {cells}")
    run.weigher.save(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
