"""Supervised training runs, advanced one batch at a time; the loss is the validation loss.

The recorded "loss after n batches" is the cross-entropy on the dataset's fixed validation split,
evaluated after every batch (index 0: before any update). A validation loss is what a user would
set a target on, and it needs no smoothing rule.
"""

from __future__ import annotations

import numpy as np
import torch

from curvegen.data import load
from curvegen.models import build
from curvegen.specs import FAMILIES, RunSpec

__all__ = ["OPTIMIZERS", "SupervisedRun", "supervised_curve"]

OPTIMIZERS = {  # name -> constructor of (parameters, learning rate); the corpus uses it too
    "sgd": lambda params, lr: torch.optim.SGD(params, lr=lr),
    "momentum": lambda params, lr: torch.optim.SGD(params, lr=lr, momentum=0.9),
    "adam": lambda params, lr: torch.optim.Adam(params, lr=lr),
    "adamw": lambda params, lr: torch.optim.AdamW(params, lr=lr, weight_decay=0.01),
    "rmsprop": lambda params, lr: torch.optim.RMSprop(params, lr=lr),
}
_SHAPE_KEYS = ("width", "depth", "channels", "hidden", "patch", "dim")


class SupervisedRun:
    """One run of `spec`: model, optimiser and batch order all seeded by ``spec.seed``.

    Seeding uses a forked global RNG (restored afterwards) for initialisation and a private
    generator for batch order, so runs interleaved in one process do not disturb each other.
    """

    def __init__(self, spec: RunSpec) -> None:
        family = FAMILIES[spec.family]
        if family.reinforcement:
            raise ValueError(f"{spec.family} is an RL family; use rl.rl_curve.")
        data = load(family.task)
        shape = {k: v for k, v in spec.hparams.items() if k in _SHAPE_KEYS}
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(spec.seed)
            self.model = build(family.kind, data.features, data.classes, **shape)
        self.optimizer = OPTIMIZERS[spec.hparams["optimizer"]](
            self.model.parameters(), spec.hparams["learning_rate"]
        )
        self.batch_size = spec.hparams["batch_size"]
        self.generator = torch.Generator().manual_seed(spec.seed)
        self.x_train, self.y_train = torch.from_numpy(data.x_train), torch.from_numpy(data.y_train)
        self.x_val, self.y_val = torch.from_numpy(data.x_val), torch.from_numpy(data.y_val)

    def validation_loss(self) -> float:
        """Cross-entropy on the validation split."""
        with torch.no_grad():
            logits = self.model(self.x_val)
            return float(torch.nn.functional.cross_entropy(logits, self.y_val))

    def step(self) -> float:
        """Train one batch (drawn with replacement), then return the validation loss."""
        rows = torch.randint(len(self.y_train), (self.batch_size,), generator=self.generator)
        loss = torch.nn.functional.cross_entropy(self.model(self.x_train[rows]), self.y_train[rows])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return self.validation_loss()


def supervised_curve(spec: RunSpec) -> np.ndarray:
    """The (batches + 1,) validation-loss curve of ``spec``."""
    run = SupervisedRun(spec)
    losses = [run.validation_loss()]
    losses += [run.step() for _ in range(spec.batches)]
    return np.asarray(losses, np.float64)
