"""Distilling a flow-matching predictor's sampler into fewer network calls.

A student `VelocityNet` of the teacher's architecture starts from the teacher's weights and learns
to land, in ``DistillConfig.student_steps`` Euler steps from a noise ``z_0``, where the teacher's
own sampler (4 Heun steps for the shipped networks: 8 network calls) lands from the same ``z_0``:
``L(θ) = E ‖Φ_student(z_0, c) − Φ_teacher(z_0, c)‖²`` over the teacher's contexts ``c``
(knowledge distillation of the sampler, Luhman & Luhman, 2021). The contexts are prefixes of
a recipe's training runs (`training_bank`, `DistillConfig.recipe`), their lengths drawn as the
environment asks (`make_queries`, environment protocol); test runs are never read. The student
keeps the teacher's calibration and basis, and its config records the student's sampler, so
`FMPredictor.pretrained` reads a saved student as it is.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from coreenv.curves import CurveBank
from mara_agents.checks import require
from mara_agents.fm_training.training import (
    FM_RECIPES,
    cosine_schedule,
    split_runs,
    training_bank,
)
from mara_agents.predictor_eval.queries import QueryConfig, make_queries
from mara_agents.predictors.flow import FMPredictor
from mara_agents.predictors.flow_model import (
    FMConfig,
    VelocityNet,
    context_matrix,
    integrate,
    sample_futures,
)

__all__ = ["DistillConfig", "DistillRun", "distill_fm", "prefix_contexts"]

_flush_print = functools.partial(print, flush=True)


@dataclass(frozen=True)
class DistillConfig:
    """One distillation run (defaults: about 6 minutes on one core for `MARA_TEACHER`)."""

    steps: int = 30_000
    """Optimiser steps (the learning rate decays to 0 over them, cosine)."""
    batch: int = 512
    """Contexts per step, drawn with replacement, each with one fresh noise ``z_0``."""
    lr: float = 3e-4
    """Adam's initial learning rate (the student starts at the teacher's weights)."""
    student_steps: int = 1
    """Euler steps of the student's sampler (the teacher's sampler is its predictor's config)."""
    recipe: str = "broad"
    """The recipe (`FM_RECIPES`) whose training runs give the prefixes, split into training and
    held-out runs as its training split them (`FMTrainConfig.holdout`). Not the teacher's own
    (``id_only``): the student must land where the teacher lands on every prefix it will meet,
    and ``broad``'s corpus holds kinds of curve the ID runs do not."""
    prefixes_per_run: int = 256
    """Prefixes drawn on each run, as the environment asks (`QueryConfig.per_curve`)."""
    runs: int | None = None
    """Use only the first runs of the recipe's bank (smoke tests); None: all of them."""
    every: int = 500
    """Steps between validations (and progress lines)."""
    seed: int = 0
    """Seeds the draw of prefixes, of training contexts and of noise."""
    validation_seed: int = 12345
    """Seeds the validation noise, so validation losses are comparable."""

    def __post_init__(self) -> None:
        require(self, ">= 1", ("steps", "batch", "student_steps", "prefixes_per_run", "every"))
        require(self, "> 0", ("lr",))
        if self.recipe not in FM_RECIPES:
            raise ValueError(
                f"DistillConfig.recipe must be one of {sorted(FM_RECIPES)}, got {self.recipe!r}."
            )
        if self.runs is not None and self.runs < 2:
            raise ValueError(f"DistillConfig.runs must be None or >= 2, got {self.runs!r}.")


@dataclass
class DistillRun:
    """What `distill_fm` returns: the student and its validation history."""

    predictor: FMPredictor
    history: list[dict]
    """One entry per validation: ``{"step", "train", "validation"}`` mean squared distances to
    the teacher's samples; step 0 is the student as initialised (the teacher read with the
    student's sampler)."""


def prefix_contexts(
    bank: CurveBank, config: FMConfig, per_run: int, min_prefix: int, seed: int
) -> np.ndarray:
    """(N, C) float32 contexts of prefixes of ``bank``'s runs, drawn as the environment asks.

    Up to ``per_run`` prefixes per run, their lengths those of `make_queries`' environment
    protocol (uniform from ``min_prefix`` up to the task's demand, for targets drawn as the
    default scenario draws them).
    """
    queries = make_queries(bank, QueryConfig(per_curve=per_run, min_prefix=min_prefix, seed=seed))
    ends = np.array([len(prefix) - 1 for prefix in queries.prefixes])
    blocks = []
    for row in np.unique(queries.rows):
        log_losses = np.log(bank.curve(int(row)).losses.astype(np.float64))
        blocks.append(context_matrix(log_losses, ends[queries.rows == row], config))
    return np.concatenate(blocks)


def distill_fm(
    teacher: FMPredictor, config: DistillConfig, log: Callable[[str], None] = _flush_print
) -> DistillRun:
    """Distil ``teacher``'s sampler into a student that samples in ``config.student_steps`` steps.

    Deterministic for a given teacher and config (on one thread: see `sample_futures`).
    """
    recipe = FM_RECIPES[config.recipe]
    bank = training_bank(dataclasses.replace(recipe, runs=config.runs))
    split = split_runs(bank, recipe.holdout)
    model = teacher.net.config
    train_x, val_x = (
        torch.from_numpy(
            prefix_contexts(runs, model, config.prefixes_per_run, recipe.min_prefix, config.seed)
        )
        for runs in (split.train, split.validation)
    )
    log(
        f"{len(train_x)} training prefixes from {len(split.train)} runs, {len(val_x)} validation "
        f"prefixes from {len(split.validation)} runs"
    )

    student_config = dataclasses.replace(model, ode_steps=config.student_steps, solver="euler")
    student = VelocityNet(student_config)
    student.load_state_dict(teacher.net.state_dict())
    teacher.net.eval()

    def endpoints(context: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        """(B, G) where the teacher's sampler lands from ``noise`` (B, G)."""
        sampler = teacher.config
        landed = sample_futures(
            teacher.net, context, 1, sampler.ode_steps, sampler.solver, noise[:, None]
        )
        return landed[:, 0]

    def distance(context: torch.Tensor, noise: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean squared distance of the student's samples from the teacher's (``target``)."""
        landed = integrate(student, noise, student.encode(context), config.student_steps, "euler")
        return ((landed - target) ** 2).mean()

    val_generator = torch.Generator().manual_seed(config.validation_seed)
    val_noise = torch.randn((len(val_x), student.grid), generator=val_generator)
    val_target = endpoints(val_x, val_noise)

    optimizer = torch.optim.Adam(student.parameters(), lr=config.lr)
    schedule = cosine_schedule(optimizer, config.steps)
    generator = torch.Generator().manual_seed(config.seed)
    history: list[dict] = []
    train_loss = math.nan
    start = time.perf_counter()
    for step in range(config.steps + 1):
        if step % config.every == 0 or step == config.steps:
            with torch.no_grad():
                val = float(distance(val_x, val_noise, val_target))
            history.append({"step": step, "train": train_loss, "validation": val})
            log(
                f"step {step}/{config.steps}  train {train_loss:.5f}  validation {val:.5f}  "
                f"({(time.perf_counter() - start) / 60:.1f} min)"
            )
        if step == config.steps:
            break
        rows = torch.randint(len(train_x), (config.batch,), generator=generator)
        noise = torch.randn((config.batch, student.grid), generator=generator)  # z_0
        loss = distance(train_x[rows], noise, endpoints(train_x[rows], noise))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        train_loss = loss.item()
    student = student.eval()
    return DistillRun(FMPredictor(student, None, teacher.calibration, teacher.basis), history)
