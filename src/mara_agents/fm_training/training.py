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
from mara_agents.fm_training.corpus import (
    BUNDLED_CORPUS,
    BUNDLED_KIND,
    corpus_rows,
    join_banks,
    load_corpus,
)
from mara_agents.fm_training.prior import prior_bank
from mara_agents.predictors.basis import fit_basis
from mara_agents.predictors.flow import FMPredictor
from mara_agents.predictors.flow_model import (
    FMConfig,
    VelocityNet,
    context_matrix,
    flow_matching_loss,
    future_offsets,
)

__all__ = [
    "FM_RECIPES",
    "Augmentation",
    "Examples",
    "FMRun",
    "FMTrainConfig",
    "RunSplit",
    "cosine_schedule",
    "examples",
    "split_runs",
    "train_fm",
    "training_bank",
]

_flush_print = functools.partial(print, flush=True)


BASIS_EXAMPLES = 200_000
"""Training futures (every k-th) the `FutureBasis` of a trained network is fitted on."""

FUTURES = ("loss", "best")
"""The future representations `FMTrainConfig.futures` can train on."""


@dataclass(frozen=True)
class Augmentation:
    """Warped copies of every training run, so the predictor meets fewer kinds of curve first.

    The copies show more speeds, depths and noise levels than the recorded families do.
    A copy of a run's log-losses ``ℓ(t)`` is ``ℓ'(t) = ℓ(0) + a·(ℓ(s·t) − ℓ(0)) + σ·ξ_t``
    (``ℓ`` linear between batches, ``ξ_t`` standard normal), cut where the run ends: ``s`` is
    drawn log-uniform over ``time_warp`` (s > 1 trains faster), ``a`` log-uniform over ``depth``
    (how far the loss falls, in log), ``σ`` uniform over ``noise``.
    """

    copies: int = 0
    """Warped copies per training run (0: the recorded runs only)."""
    time_warp: tuple[float, float] = (0.5, 1.9)
    """Range of the speed factor s."""
    depth: tuple[float, float] = (0.5, 2.0)
    """Range of the depth factor a."""
    noise: tuple[float, float] = (0.0, 0.03)
    """Range of σ, the log-loss noise per batch."""
    seed: int = 0
    """Seeds the draws of the copies."""

    def __post_init__(self) -> None:
        if self.copies < 0:
            raise ValueError(f"Augmentation.copies must be >= 0, got {self.copies!r}.")
        for name in ("time_warp", "depth"):
            low, high = getattr(self, name)
            if not 0 < low <= high:
                raise ValueError(
                    f"Augmentation.{name} must be (low, high) with 0 < low <= high, got "
                    f"{getattr(self, name)!r}."
                )
        if not 0 <= self.noise[0] <= self.noise[1]:
            raise ValueError(
                f"Augmentation.noise must be (low, high) with 0 <= low <= high, got {self.noise!r}."
            )

    def copies_of(self, log_losses: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
        """The warped copies of one run's log-losses (see the class docstring)."""
        out = []
        last = len(log_losses) - 1
        for _ in range(self.copies):
            speed, depth = (math.exp(rng.uniform(*np.log(r))) for r in (self.time_warp, self.depth))
            sigma = rng.uniform(*self.noise)
            warped = np.interp(
                np.arange(int(last / speed) + 1) * speed, np.arange(last + 1), log_losses
            )
            warped = warped[: last + 1]
            warped = log_losses[0] + depth * (warped - log_losses[0])
            out.append(warped + sigma * rng.standard_normal(len(warped)))
        return out


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
    exclude_families: tuple[str, ...] = ()
    """Families of the split left out of training (the leave-one-family-out folds)."""
    corpus: str | None = None
    """A curve corpus whose ``train`` runs are trained on as well: ``"bundled"`` (the shipped
    one, `curvegen.CORPUS`) or the path of one ``benchmarks/make_corpus.py`` wrote; None: the
    named task set alone."""
    corpus_curves: tuple[str, ...] = ("validation", "train", "train_ema")
    """Which curves of each corpus run are trained on."""
    exclude_kinds: tuple[str, ...] = ()
    """Kinds of training left out (the leave-one-kind-out folds); leaving out
    `BUNDLED_KIND` leaves out the named task set's runs too."""
    prior_curves: int = 0
    """Curves of the synthetic prior (`mara_agents.fm_training.prior`) trained on as well."""
    prior_seed: int = 0
    """Seeds the draw of the prior's curves."""
    augmentation: Augmentation = Augmentation()
    """Warped copies of the training runs (never of the held-out ones)."""
    futures: str = "loss"
    """What the network learns to sample: ``"loss"``, the loss at each future offset, or
    ``"best"``, the lowest loss reached by then. A task succeeds the first time its loss reaches
    the target, so the crossing of the best loss *is* the demand; the loss itself may dip
    between grid points and cross earlier than its grid values show."""
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
        if self.futures not in FUTURES:
            raise ValueError(
                f"FMTrainConfig.futures must be one of {FUTURES}, got {self.futures!r}."
            )
        if self.runs is not None and self.runs < 2:
            raise ValueError(f"FMTrainConfig.runs must be None or >= 2, got {self.runs!r}.")
        if self.prior_curves < 0:
            raise ValueError(f"FMTrainConfig.prior_curves must be >= 0, got {self.prior_curves!r}.")
        if self.corpus is None and self.exclude_kinds:
            raise ValueError(
                "FMTrainConfig.exclude_kinds needs a corpus (FMTrainConfig.corpus), got "
                f"exclude_kinds={self.exclude_kinds!r} without one."
            )


FM_RECIPES: dict[str, FMTrainConfig] = {
    "id_only": FMTrainConfig(),
    "augmented": FMTrainConfig(futures="best", augmentation=Augmentation(copies=3)),
    "wls_context": FMTrainConfig(model=FMConfig(wls_context=True)),
    "broad": FMTrainConfig(corpus=BUNDLED_CORPUS, prior_curves=1500),
    "broad_noprior": FMTrainConfig(corpus=BUNDLED_CORPUS),
    "broad_scaled": FMTrainConfig(
        model=FMConfig(scaled_context=True), corpus=BUNDLED_CORPUS, prior_curves=1500
    ),
}
"""Named training recipes (docs/predictors.md): ``id_only`` is `fm_mara_teacher`'s (the
defaults: the ID training runs, the loss itself); ``augmented`` samples the best loss and adds
three warped copies of every run; ``wls_context`` gives the network LARA's power-law fit of the
prefix; ``broad``, the shipped checkpoint's, adds the curve corpus's training runs (every kind,
validation and training losses) and 1,500 curves of the synthetic prior; ``broad_noprior`` is
``broad`` without the prior (the prior's ablation); ``broad_scaled`` is ``broad`` with the
context also on a symmetric log scale and the prefix's noise level (`FMConfig.scaled_context`).
The corpus recipes are folded by kind
(`loko_folds`), the others by family."""


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


def examples(
    bank: CurveBank,
    config: FMConfig,
    min_prefix: int,
    augmentation: Augmentation = Augmentation(),
    futures_kind: str = "loss",
) -> Examples:
    """Every usable (run, prefix length) of ``bank`` and of its warped copies.

    Usable: ``min_prefix <= n <= length - 1 - H``, so the whole future up to the cap is known.
    ``futures_kind`` is `FMTrainConfig.futures`.
    """
    offsets = future_offsets(config.horizon)
    rng = np.random.default_rng(augmentation.seed)
    contexts, futures = [], []
    for row in range(len(bank)):
        recorded = np.log(bank.curve(row).losses.astype(np.float64))
        for log_losses in [recorded, *augmentation.copies_of(recorded, rng)]:
            ends = np.arange(min_prefix, len(log_losses) - config.horizon)
            if len(ends) == 0:
                continue
            contexts.append(context_matrix(log_losses, ends, config))
            if futures_kind == "best":  # lowest loss over the next 1..t_h batches
                ahead = log_losses[ends[:, None] + np.arange(1, config.horizon + 1)]
                reached = np.minimum.accumulate(ahead, axis=1)[:, offsets - 1]
            else:
                reached = log_losses[ends[:, None] + offsets]
            futures.append(reached - log_losses[ends, None])
    return Examples(
        np.concatenate(contexts).astype(np.float32), np.concatenate(futures).astype(np.float32)
    )


def training_bank(config: FMTrainConfig) -> CurveBank:
    """Every curve ``config`` trains on, in this order.

    The named task set (less its excluded families), the corpus's ``train`` runs (less the
    excluded kinds), then the prior's curves.
    """
    bank = named_task_set(config.task_set)
    unknown = set(config.exclude_families) - set(bank.families)
    if unknown:
        raise ValueError(
            f"FMTrainConfig.exclude_families names {sorted(unknown)}, not families of "
            f"{config.task_set!r}; its families are {list(bank.families)}."
        )
    bank = bank.subset(np.flatnonzero(~np.isin(bank.family, config.exclude_families)))
    if config.runs is not None:
        bank = bank.subset(np.arange(min(config.runs, len(bank))))
    banks = [] if BUNDLED_KIND in config.exclude_kinds else [bank]
    if config.corpus is not None:
        corpus = corpus_rows(
            load_corpus(config.corpus),
            curves=config.corpus_curves,
            split="train",
            exclude_kinds=config.exclude_kinds,
        )
        if config.runs is not None:
            corpus = corpus.subset(np.arange(min(config.runs, len(corpus))))
        banks.append(corpus)
    if config.prior_curves:
        banks.append(prior_bank(config.prior_curves, config.prior_seed))
    return banks[0] if len(banks) == 1 else join_banks(banks, "training")


def split_runs(bank: CurveBank, holdout: int) -> RunSplit:
    """Hold out one run in ``holdout`` (rows 0, holdout, 2·holdout, …) for validation."""
    held = np.arange(len(bank)) % holdout == 0
    return RunSplit(bank.subset(~held), bank.subset(held))


def cosine_schedule(
    optimizer: torch.optim.Optimizer, steps: int
) -> torch.optim.lr_scheduler.LambdaLR:
    """The learning rate from its initial value down to 0 over ``steps`` steps, on a half cosine."""
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * min(step / steps, 1.0)))
    )


def train_fm(config: FMTrainConfig, work: Path, log: Callable[[str], None] = _flush_print) -> FMRun:
    """Train a flow-matching predictor; resumable.

    The whole training state (model, optimiser, schedule, generator, history) goes to
    ``work/checkpoint.pt`` every ``config.every`` steps, and a call that finds one continues from
    it exactly; the validation history is also written to ``work/history.json`` at the end.
    """
    device = config.device
    split = split_runs(training_bank(config), config.holdout)
    train = examples(
        split.train, config.model, config.min_prefix, config.augmentation, config.futures
    )
    validation = examples(
        split.validation, config.model, config.min_prefix, Augmentation(), config.futures
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
    schedule = cosine_schedule(optimizer, config.steps)
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
    basis = fit_basis(train.futures[:: max(1, len(train) // BASIS_EXAMPLES)])
    return FMRun(FMPredictor(net.to("cpu"), basis=basis), history)
