"""Train the flow-matching predictor on the ID training runs only, and ship the checkpoint.

    python benchmarks/train_fm.py                       # ~3 min on 2 CPU cores
    python benchmarks/train_fm.py --device cuda --steps 40000

A command line over `mara_agents.predictors.flow_training.train_fm` (every default is the shipped
run's, `FMTrainConfig`). Examples are every (run, prefix length n) of the bundled bank's
``id_train`` split with ``W_min <= n <= length - 1 - H``; one run in ten is held out to watch for
over-fitting; test runs, RL and ViT runs are never read. Checkpoints (model, optimiser, step,
generator) go to ``--work`` every ``--every`` steps and a rerun resumes from the last; the final
network is written to ``--out`` (the shipped checkpoint) by `FMPredictor.save`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from mara_agents.predictors.flow import PRETRAINED
from mara_agents.predictors.flow_training import FMTrainConfig, train_fm

DEFAULTS = FMTrainConfig()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=DEFAULTS.steps)
    parser.add_argument("--batch", type=int, default=DEFAULTS.batch)
    parser.add_argument("--lr", type=float, default=DEFAULTS.lr)
    parser.add_argument(
        "--every", type=int, default=DEFAULTS.every, help="checkpoint and validation period"
    )
    parser.add_argument("--device", default=DEFAULTS.device)
    parser.add_argument("--seed", type=int, default=DEFAULTS.seed)
    parser.add_argument("--work", type=Path, default=Path("results/fm"))
    parser.add_argument("--out", type=Path, default=PRETRAINED)
    parser.add_argument("--task-set", default=DEFAULTS.task_set, help="never a test or OOD split")
    parser.add_argument(
        "--runs", type=int, default=DEFAULTS.runs, help="use only the first runs (smoke tests)"
    )
    parser.add_argument("--hidden", type=int, default=DEFAULTS.model.hidden)
    parser.add_argument("--layers", type=int, default=DEFAULTS.model.layers)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.task_set != DEFAULTS.task_set:
        print(f"note: training on {args.task_set!r}, not the ID training split", file=sys.stderr)
    config = FMTrainConfig(
        model=dataclasses.replace(DEFAULTS.model, hidden=args.hidden, layers=args.layers),
        steps=args.steps,
        batch=args.batch,
        lr=args.lr,
        every=args.every,
        task_set=args.task_set,
        runs=args.runs,
        seed=args.seed,
        device=args.device,
    )
    run = train_fm(config, args.work)
    run.predictor.save(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
