"""How noisy are FM's sampled futures, against the prefixes they continue?

    python studies/value_of_information/sample_noise.py --task-set id_train --steps 4 16 64
    python studies/value_of_information/sample_noise.py --checkpoint results/fm_0.2.1.pt \
        --bank my_runs.csv

For prefixes of the chosen runs (one per run, at batch 50-300), prints the median per-batch noise
of the log-loss in the prefixes (`mara_agents.predictors.flow.noise_level`) and, per number of
integration steps, the median batch-to-batch change of the sampled futures over their first 16
grid points (one batch apart) and their spread across samples one batch ahead; with
``--denoise`` also after the checkpoint's `FutureBasis`. A smooth curve's futures should change
by about its own noise per batch; a larger figure is noise the sampler adds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from coreenv import BankError
from coreenv.curves import named_task_set
from mara_agents.cli.parser import count
from mara_agents.predictor_eval.queries import read_bank
from mara_agents.predictors.flow import PRETRAINED, FMPredictor
from mara_agents.predictors.flow_model import noise_level


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=PRETRAINED)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--task-set", default="id_train", help="a named task set")
    source.add_argument("--bank", type=Path, help="a CSV of training logs or a .npz bank")
    parser.add_argument("--steps", type=count, nargs="+", default=[4, 16, 64])
    parser.add_argument("--runs", type=count, default=40, help="prefixes (one per run)")
    parser.add_argument("--denoise", action="store_true", help="also through the FutureBasis")
    args = parser.parse_args(argv)
    if not args.checkpoint.is_file():
        parser.error(f"--checkpoint: no checkpoint at {args.checkpoint}")
    try:
        args.source = read_bank(args.bank) if args.bank else named_task_set(args.task_set)
    except (BankError, ValueError, KeyError) as error:
        parser.error(f"--bank/--task-set: {error}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(1)
    bank = args.source
    rng = np.random.default_rng(0)
    rows = rng.choice(len(bank), size=min(args.runs, len(bank)), replace=False)
    prefixes = []
    for row in rows:
        losses = bank.curve(int(row)).losses
        prefixes.append(
            losses[: int(rng.integers(min(50, len(losses) - 2), min(300, len(losses) - 1))) + 1]
        )
    noise = [noise_level(np.log(p), [len(p) - 1])[0] for p in prefixes]
    print(f"{len(prefixes)} prefixes: median per-batch noise of the prefix {np.median(noise):.4f}")
    print("| steps | reading | batch-to-batch change | spread one batch ahead |\n|---|---|---|---|")
    for steps in args.steps:
        predictor = FMPredictor.pretrained(args.checkpoint, calibrated=False, ode_steps=steps)
        readings = [False, True] if args.denoise else [False]
        for denoise in readings:
            futures = predictor.read_futures(prefixes, denoise)
            change = np.median(np.abs(np.diff(futures[:, :, :16], axis=2)))
            spread = np.median(futures[:, :, 0].std(axis=1))
            label = "denoised" if denoise else "raw"
            print(f"| {steps} | {label} | {change:.4f} | {spread:.4f} |")


if __name__ == "__main__":
    main()
