"""One supervised run of the corpus: both the validation loss and the per-minibatch training loss.

After ``k`` updates (k = 0 .. batches) a run records the loss of the model on the fixed validation
rows and the loss of the same model on the minibatch it is about to train on: what a user's
logger writes as "val_loss" and "train_loss". The learning rate follows the run's schedule
(`SCHEDULES`); gradients are clipped at norm `CLIP` as most training scripts do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from coreenv_lab.corpus.networks import build_network
from coreenv_lab.corpus.problems import Problem, problem
from curvegen.specs import RunSpec
from curvegen.supervised import OPTIMIZERS

__all__ = ["CLIP", "FLOOR", "SCHEDULES", "RunCurves", "batch_loss", "schedule_factor", "train_run"]

CLIP = 10.0
FLOOR = 1e-6
"""Recorded losses are at least this (a loss must be > 0 to host a task)."""

SCHEDULES = ("constant", "step", "cosine", "warmup_cosine", "warmup", "exponential")
"""Learning-rate schedules a run draws from (`schedule_factor`)."""


@dataclass(frozen=True)
class RunCurves:
    """The two recorded curves of a run, each (batches + 1,)."""

    validation: np.ndarray
    train: np.ndarray


def schedule_factor(name: str, step: int, total: int) -> float:
    """The learning rate's multiplier at update ``step`` of ``total`` under schedule ``name``.

    ``step``: ×0.1 at 50% and again at 75% of the run; ``cosine``: to 0 at the end;
    ``warmup``: linear from 0 over the first 10%, then constant; ``warmup_cosine``: 5% of
    warm-up, then cosine; ``exponential``: to 1% at the end.
    """
    progress = step / total
    if name == "constant":
        return 1.0
    if name == "step":
        return 0.1 ** ((progress >= 0.5) + (progress >= 0.75))
    if name == "cosine":
        return 0.5 * (1 + math.cos(math.pi * progress))
    if name == "warmup":
        return min(1.0, (step + 1) / (0.1 * total))
    if name == "warmup_cosine":
        if progress < 0.05:
            return (step + 1) / (0.05 * total)
        return 0.5 * (1 + math.cos(math.pi * (progress - 0.05) / 0.95))
    if name == "exponential":
        return 0.01**progress
    raise ValueError(f"unknown schedule {name!r}; known: {SCHEDULES}.")


def batch_loss(model: nn.Module, problem: Problem, x: torch.Tensor, y: torch.Tensor):
    """The objective's mean loss of ``model`` on one batch (`coreenv_lab.corpus.problems`)."""
    out = model(x)
    if problem.objective == "cross_entropy":
        return nn.functional.cross_entropy(out, y)
    if problem.objective == "mse":
        return nn.functional.mse_loss(out, y)
    if problem.objective == "bce":
        return nn.functional.binary_cross_entropy_with_logits(out, y)
    return out.mean()  # "likelihood": the model returns each row's negative log-likelihood


def train_run(spec: RunSpec, problem_name: str, network: str, shape: dict) -> RunCurves:
    """Train ``spec`` (hyperparameters in ``spec.hparams``) and record both of its curves.

    Seeding: model initialisation, batch order and any model noise (the VAE) all come from
    ``spec.seed``, through a forked global generator restored afterwards.
    """
    data = problem(problem_name)
    hp = spec.hparams
    x_train, y_train = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
    x_val, y_val = torch.from_numpy(data.x_val), torch.from_numpy(data.y_val)
    validation, train = [], []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        model = build_network(network, data, **shape)
        optimizer = OPTIMIZERS[hp["optimizer"]](model.parameters(), hp["learning_rate"])
        generator = torch.Generator().manual_seed(spec.seed)
        for step in range(spec.batches + 1):
            with torch.no_grad():
                validation.append(float(batch_loss(model, data, x_val, y_val)))
            rows = torch.randint(len(y_train), (hp["batch_size"],), generator=generator)
            loss = batch_loss(model, data, x_train[rows], y_train[rows])
            train.append(loss.item())
            if step == spec.batches or not math.isfinite(train[-1]):
                break
            for group in optimizer.param_groups:
                group["lr"] = hp["learning_rate"] * schedule_factor(
                    hp["schedule"], step, spec.batches
                )
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            optimizer.step()
    return RunCurves(*(np.maximum(np.asarray(c, np.float64), FLOOR) for c in (validation, train)))
