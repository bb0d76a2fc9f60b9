"""Distil a flow-matching network's sampler into a student that samples in one or two Euler steps.

    python benchmarks/distill_fm.py --out results/distill/fm_mara.pt   # the shipped one, ~6 min
    python benchmarks/distill_fm.py --recipe id_only --out results/distill/fm_mara_id.pt

A command line over `coreenv_lab.fm_training.distill.distill_fm`. The teacher is package 0.2's
network (`coreenv_lab.predictors.MARA_TEACHER`, on whose estimates the shipped MARA policies were
trained) unless ``--teacher`` names another checkpoint; it is read with its own sampler and its
calibration, which the student keeps. Prefixes come from the training runs of ``--recipe``
(default ``broad``: the curve corpus and the ``id_train`` runs; never test runs). The student is
written to ``--out``; the shipped `mara_agents.predictors.flow.MARA_NETWORK` is the default
command's, and `studies/samplers_distillation/mara_samplers.py` plays any other (``--settings
32:1:euler@PATH``).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import torch

from coreenv_lab.fm_training.distill import DistillConfig, distill_fm
from coreenv_lab.predictors import MARA_TEACHER
from mara_agents.predictors.flow import FMPredictor


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = DistillConfig()
    parser.add_argument("--teacher", type=Path, default=MARA_TEACHER, help="FM checkpoint")
    parser.add_argument(
        "--recipe",
        default=defaults.recipe,
        help="FM_RECIPES name whose training runs give prefixes",
    )
    parser.add_argument("--student-steps", type=int, default=defaults.student_steps)
    parser.add_argument("--steps", type=int, default=defaults.steps, help="optimiser steps")
    parser.add_argument("--batch", type=int, default=defaults.batch)
    parser.add_argument("--lr", type=float, default=defaults.lr)
    parser.add_argument("--prefixes-per-run", type=int, default=defaults.prefixes_per_run)
    parser.add_argument("--runs", type=int, help="use only the first runs (smoke tests)")
    parser.add_argument("--every", type=int, default=defaults.every, help="validation period")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--validation-seed", type=int, default=defaults.validation_seed)
    parser.add_argument("--out", type=Path, required=True, help="the student's checkpoint")
    args = parser.parse_args(argv)
    if not args.teacher.is_file():
        parser.error(f"--teacher: no checkpoint at {args.teacher}")
    try:
        args.teacher_fm = FMPredictor.pretrained(args.teacher)
    except Exception as error:
        message = " ".join(str(error).split())[:120]
        parser.error(f"--teacher: {args.teacher} is not an FM checkpoint: {message}")
    fields = [field.name for field in dataclasses.fields(DistillConfig)]
    try:
        args.config = DistillConfig(**{name: getattr(args, name) for name in fields})
    except ValueError as error:  # DistillConfig names the field and the value
        parser.error(str(error))
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(1)
    teacher = args.teacher_fm
    print(f"teacher {args.teacher}: {dataclasses.asdict(teacher.config)}")
    run = distill_fm(teacher, args.config)
    run.predictor.save(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
