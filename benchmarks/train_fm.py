"""Train the flow-matching predictor on the ID training runs only, and ship the checkpoint.

    python benchmarks/train_fm.py                       # ~3 min on 2 CPU cores
    python benchmarks/train_fm.py --device cuda --steps 40000

Examples are every (run, prefix length n) of the bundled bank's ``id_train`` split with
``W_min <= n <= length - 1 - H`` (so the whole future up to the cap is recorded). One run in ten of
that split is held out to watch for over-fitting; test runs, RL and ViT runs are never read.
Checkpoints (model, optimiser, step, generator) go to ``--work`` every ``--every`` steps and a
rerun resumes from the last; the final network is written to ``--out`` (the shipped checkpoint).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from coreenv.curves import CurveBank, named_task_set
from mara_agents.predictors.flow import (
    PRETRAINED,
    FMConfig,
    VelocityNet,
    context_features,
    flow_matching_loss,
    future_offsets,
)

MIN_PREFIX = 10  # the environment's default W_min: predictors are asked only from there on


def examples(bank: CurveBank, config: FMConfig) -> tuple[np.ndarray, np.ndarray]:
    """(contexts (N, C), futures (N, G)) of every usable (run, prefix length)."""
    offsets = future_offsets(config.horizon)
    contexts, futures = [], []
    for row in range(len(bank)):
        log_losses = np.log(bank.curve(row).losses)
        for n in range(MIN_PREFIX, len(log_losses) - 1 - config.horizon + 1):
            contexts.append(context_features(np.exp(log_losses[: n + 1]), config))
            futures.append(log_losses[n + offsets] - log_losses[n])
    return np.array(contexts, np.float32), np.array(futures, np.float32)


def split(bank: CurveBank) -> tuple[CurveBank, CurveBank]:
    """Hold out one training run in ten (by run) for validation."""
    held = np.arange(len(bank)) % 10 == 0
    return bank.subset(~held), bank.subset(held)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30_000)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--every", type=int, default=1000, help="checkpoint and validation period")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("results/fm"))
    parser.add_argument("--out", type=Path, default=PRETRAINED)
    parser.add_argument("--task-set", default="id_train", help="never a test or OOD split")
    parser.add_argument(
        "--runs", type=int, default=None, help="use only the first runs (smoke tests)"
    )
    parser.add_argument("--hidden", type=int, default=FMConfig.hidden)
    parser.add_argument("--layers", type=int, default=FMConfig.layers)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.task_set != "id_train":
        print(f"note: training on {args.task_set!r}, not the ID training split", file=sys.stderr)
    torch.manual_seed(args.seed)
    config = FMConfig(hidden=args.hidden, layers=args.layers)
    bank = named_task_set(args.task_set)
    if args.runs is not None:
        bank = bank.subset(np.arange(min(args.runs, len(bank))))
    train_bank, val_bank = split(bank)
    train_x, train_y = (torch.from_numpy(a).to(args.device) for a in examples(train_bank, config))
    val_x, val_y = (torch.from_numpy(a).to(args.device) for a in examples(val_bank, config))
    print(
        f"{len(train_x)} training examples from {len(train_bank)} runs, "
        f"{len(val_x)} validation examples from {len(val_bank)} runs"
    )

    net = VelocityNet(config).to(args.device)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * min(step / args.steps, 1.0)))
    )
    generator = torch.Generator(device=args.device).manual_seed(args.seed)
    step, history = 0, []
    checkpoint = args.work / "checkpoint.pt"
    if checkpoint.exists():
        state = torch.load(checkpoint, map_location=args.device, weights_only=False)
        net.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        generator.set_state(state["generator"])
        step, history = state["step"], state["history"]
        print(f"resumed from {checkpoint} at step {step}")

    args.work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    while step < args.steps:
        rows = torch.randint(len(train_x), (args.batch,), generator=generator, device=args.device)
        loss = flow_matching_loss(net, train_y[rows], train_x[rows], generator)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        step += 1
        if step % args.every == 0 or step == args.steps:
            with torch.no_grad():
                val_generator = torch.Generator(device=args.device).manual_seed(12345)
                val = float(flow_matching_loss(net, val_y, val_x, val_generator))
            history.append({"step": step, "train": loss.item(), "validation": val})
            torch.save(
                {
                    "model": net.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "schedule": schedule.state_dict(),
                    "generator": generator.get_state(),
                    "step": step,
                    "history": history,
                },
                checkpoint,
            )
            elapsed = time.perf_counter() - start
            print(
                f"step {step}/{args.steps}  train {loss.item():.4f}  validation {val:.4f}  "
                f"({elapsed / 60:.1f} min)",
                flush=True,
            )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    net = net.to("cpu")
    torch.save({"config": asdict(config), "model": net.state_dict()}, args.out)
    (args.work / "history.json").write_text(json.dumps(history, indent=1))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
