"""Training the flow-matching predictor: its examples, a held-out split, and a resumable loop.

Examples are every (run, prefix length n) of a bank with ``W_min <= n <= length - 1 - H`` (so the
whole future up to the cap is recorded), ``W_min`` the environment's. One run in
`FMTrainConfig.holdout` is held out to watch for over-fitting. The shipped predictor was trained
by ``train_fm(FMTrainConfig())`` on the ``id_train`` runs only (``benchmarks/train_fm.py``); test
runs, RL and ViT runs are never read.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from coreenv import EnvConfig
from coreenv.curves import CurveBank, named_task_set
from mara_agents.checks import require
from mara_agents.predictors.flow import (
    FMConfig,
    FMPredictor,
    VelocityNet,
    context_features,
    flow_matching_loss,
    future_offsets,
)

__all__ = ["Examples", "FMRun", "FMTrainConfig", "RunSplit", "examples", "split_runs", "train_fm"]

_flush_print = functools.partial(print, flush=True)


@dataclass(frozen=True)
class FMTrainConfig:
    """One training run of the flow-matching predictor (defaults: the shipped run)."""

    model: FMConfig = FMConfig()
    """The representation and network to train."""
    steps: int = 30_000
    """Optimiser steps (the learning rate decays to 0 over them, cosine)."""
    batch: int = 512
    """Examples per step, drawn with replacement."""
    lr: float = 1e-3
    """Adam's initial learning rate."""
    every: int = 1000
    """Steps between validations and checkpoints."""
    task_set: str = "id_train"
    """The named split trained on: never a test or OOD split."""
    runs: int | None = None
    """Use only the first runs of the split (smoke tests); None: all of them."""
    holdout: int = 10
    """One run in ``holdout`` (by bank row) is held out for validation."""
    min_prefix: int = EnvConfig().min_prefix
    """W_min: the shortest prefix trained on (predictors are asked only from there on)."""
    seed: int = 0
    """Seeds the initial weights and the draw of examples and noise."""
    validation_seed: int = 12345
    """Seeds the noise of every validation, so validation losses are comparable."""
    device: str = "cpu"
    """Where the network trains ("cuda" works)."""

    def __post_init__(self) -> None:
        require(self, ">= 1", ("steps", "batch", "every", "min_prefix"))
        if self.holdout < 2:
            raise ValueError(f"FMTrainConfig.holdout must be >= 2, got {self.holdout!r}.")
        if not self.lr > 0:
            raise ValueError(f"FMTrainConfig.lr must be > 0, got {self.lr!r}.")
        if self.runs is not None and self.runs < 2:
            raise ValueError(f"FMTrainConfig.runs must be None or >= 2, got {self.runs!r}.")


@dataclass(frozen=True)
class Examples:
    """Training pairs: contexts of prefixes and the futures that followed them."""

    contexts: np.ndarray  # (N, C) float32, `context_features`
    futures: np.ndarray  # (N, G) float32, z on the grid `future_offsets`

    def __len__(self) -> int:
        return len(self.contexts)


@dataclass(frozen=True)
class RunSplit:
    """A bank split by run into training and held-out runs."""

    train: CurveBank
    validation: CurveBank


@dataclass
class FMRun:
    """What `train_fm` returns: the trained predictor and its validation history."""

    predictor: FMPredictor
    history: list[dict]
    """One entry per validation: ``{"step", "train", "validation"}`` losses."""


def examples(bank: CurveBank, config: FMConfig, min_prefix: int) -> Examples:
    """Every usable (run, prefix length) of ``bank``: ``min_prefix <= n <= length - 1 - H``."""
    offsets = future_offsets(config.horizon)
    contexts, futures = [], []
    for row in range(len(bank)):
        log_losses = np.log(bank.curve(row).losses)
        for n in range(min_prefix, len(log_losses) - 1 - config.horizon + 1):
            contexts.append(context_features(np.exp(log_losses[: n + 1]), config))
            futures.append(log_losses[n + offsets] - log_losses[n])
    return Examples(np.array(contexts, np.float32), np.array(futures, np.float32))


def split_runs(bank: CurveBank, holdout: int) -> RunSplit:
    """Hold out one run in ``holdout`` (rows 0, holdout, 2·holdout, …) for validation."""
    held = np.arange(len(bank)) % holdout == 0
    return RunSplit(bank.subset(~held), bank.subset(held))


def train_fm(config: FMTrainConfig, work: Path, log: Callable[[str], None] = _flush_print) -> FMRun:
    """Train a flow-matching predictor; resumable.

    The whole training state (model, optimiser, schedule, generator, history) goes to
    ``work/checkpoint.pt`` every ``config.every`` steps, and a call that finds one continues from
    it exactly; the validation history is also written to ``work/history.json`` at the end.
    """
    device = config.device
    bank = named_task_set(config.task_set)
    if config.runs is not None:
        bank = bank.subset(np.arange(min(config.runs, len(bank))))
    split = split_runs(bank, config.holdout)
    train, validation = (
        examples(part, config.model, config.min_prefix) for part in (split.train, split.validation)
    )
    train_x, train_y = (torch.from_numpy(a).to(device) for a in (train.contexts, train.futures))
    val_x, val_y = (
        torch.from_numpy(a).to(device) for a in (validation.contexts, validation.futures)
    )
    log(
        f"{len(train)} training examples from {len(split.train)} runs, "
        f"{len(validation)} validation examples from {len(split.validation)} runs"
    )

    with torch.random.fork_rng(devices=[]):  # the initial weights, from the seed alone
        torch.manual_seed(config.seed)
        net = VelocityNet(config.model).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * min(step / config.steps, 1.0)))
    )
    generator = torch.Generator(device=device).manual_seed(config.seed)
    step, history = 0, []
    checkpoint = work / "checkpoint.pt"
    if checkpoint.exists():
        state = torch.load(checkpoint, map_location=device, weights_only=False)
        net.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        generator.set_state(state["generator"])
        step, history = state["step"], state["history"]
        log(f"resumed from {checkpoint} at step {step}")

    work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    while step < config.steps:
        rows = torch.randint(len(train_x), (config.batch,), generator=generator, device=device)
        loss = flow_matching_loss(net, train_y[rows], train_x[rows], generator)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        step += 1
        if step % config.every == 0 or step == config.steps:
            with torch.no_grad():
                val_generator = torch.Generator(device=device).manual_seed(config.validation_seed)
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
            log(
                f"step {step}/{config.steps}  train {loss.item():.4f}  validation {val:.4f}  "
                f"({(time.perf_counter() - start) / 60:.1f} min)"
            )
    (work / "history.json").write_text(json.dumps(history, indent=1))
    return FMRun(FMPredictor(net.to("cpu")), history)
