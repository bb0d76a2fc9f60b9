"""The families of recorded training runs and how each run's hyperparameters are drawn.

A *family* is one model–dataset (or algorithm–environment) configuration; a *run* is one training
of it with hyperparameters drawn from its seed. Every run is reproducible from its `RunSpec`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "FAMILIES",
    "GROUPS",
    "RUNS_PER_FAMILY",
    "Family",
    "RunSpec",
    "item",
    "plan_families",
    "plan_runs",
]

GROUPS = ("id", "rl_ood", "vit_ood")
"""In-distribution families (predictor training and ID tests), RL and ViT out-of-distribution."""

RUNS_PER_FAMILY = {"id": 64, "vit_ood": 64, "rl_ood": 13}
"""Runs per family of the bundled bank: at least 60 per ID configuration and per OOD set (the RL
set has five families of 13). RL runs cost ~25 s each, supervised runs ~1-10 s."""

# learning-rate ranges (log-uniform) that make each optimiser learn without diverging
LR_RANGES = {
    "sgd": (0.02, 0.5),
    "momentum": (0.003, 0.1),
    "adam": (3e-4, 1e-2),
    "rmsprop": (1e-4, 3e-3),
    "adamw": (3e-4, 3e-3),
}


@dataclass(frozen=True)
class Family:
    """A model–dataset (or algorithm–environment) configuration.

    Attributes:
        name: e.g. ``"mlp-digits"``.
        group: one of `GROUPS`.
        kind: model (``mlp``, ``cnn``, ``lstm``, ``vit``) or RL algorithm (``ppo``, ``a2c``,
            ``dqn``).
        task: dataset name or Gymnasium environment id.
        choices: hyperparameter -> the values a run draws from uniformly.
        optimizers: optimisers a supervised run draws from.
    """

    name: str
    group: str
    kind: str
    task: str
    choices: dict[str, tuple] = field(default_factory=dict)
    optimizers: tuple[str, ...] = ("sgd", "momentum", "adam", "rmsprop")

    @property
    def reinforcement(self) -> bool:
        """Whether runs are RL training (stable-baselines3) rather than supervised."""
        return self.kind in ("ppo", "a2c", "dqn")


_BATCHES = {"batch_size": (16, 32, 64, 128)}
_FAMILY_LIST = [
    Family("mlp-digits", "id", "mlp", "digits", {"width": (16, 32, 64, 128), **_BATCHES}),
    Family("cnn-digits", "id", "cnn", "digits", {"channels": (4, 8, 16), **_BATCHES}),
    Family("lstm-digits", "id", "lstm", "digits", {"hidden": (16, 32, 64), **_BATCHES}),
    Family("logreg-digits", "id", "mlp", "digits", {"depth": (0,), **_BATCHES}),
    Family("mlp-wine", "id", "mlp", "wine", {"width": (8, 16, 32, 64), **_BATCHES}),
    Family(
        "mlp-breast_cancer", "id", "mlp", "breast_cancer", {"width": (8, 16, 32, 64), **_BATCHES}
    ),
    Family("logreg-breast_cancer", "id", "mlp", "breast_cancer", {"depth": (0,), **_BATCHES}),
    Family(
        "mlp-generated",
        "id",
        "mlp",
        "generated",
        {"width": (16, 32, 64, 128), "depth": (1, 2), **_BATCHES},
    ),
    Family(
        "vit-digits",
        "vit_ood",
        "vit",
        "digits",
        {"patch": (2, 4), "dim": (16, 32, 48), "depth": (1, 2), "batch_size": (32, 64, 128)},
        optimizers=("adam", "adamw"),
    ),
    Family("ppo-cartpole", "rl_ood", "ppo", "CartPole-v1", {"n_steps": (128, 256, 512)}),
    Family("a2c-cartpole", "rl_ood", "a2c", "CartPole-v1", {"n_steps": (5, 8, 16)}),
    Family(
        "dqn-cartpole", "rl_ood", "dqn", "CartPole-v1", {"target_update_interval": (250, 500, 1000)}
    ),
    Family("ppo-acrobot", "rl_ood", "ppo", "Acrobot-v1", {"n_steps": (128, 256, 512)}),
    Family(
        "dqn-acrobot", "rl_ood", "dqn", "Acrobot-v1", {"target_update_interval": (250, 500, 1000)}
    ),
]
FAMILIES = {family.name: family for family in _FAMILY_LIST}

# RL: learning rate = the algorithm's stable-baselines3 default times a log-uniform factor
RL_DEFAULT_LR = {"ppo": 3e-4, "a2c": 7e-4, "dqn": 1e-3}


@dataclass(frozen=True)
class RunSpec:
    """One training run: everything needed to reproduce it.

    Attributes:
        family: a key of `FAMILIES`.
        index: the run's number within its family.
        seed: seeds model initialisation, batch order and the hyperparameter draw.
        batches: loss points recorded after the initial one (the curve has ``batches + 1``).
        hparams: the drawn hyperparameters (JSON-serialisable).
    """

    family: str
    index: int
    seed: int
    batches: int
    hparams: dict[str, Any]

    def config(self) -> dict[str, Any]:
        """The JSON record of the run stored in the bank."""
        return {
            "family": self.family,
            "index": self.index,
            "seed": self.seed,
            "batches": self.batches,
            **self.hparams,
        }


def run_seed(family: str, index: int) -> int:
    """A seed that depends only on the family's name and the run number (stable across edits)."""
    return (zlib.crc32(family.encode()) % 100_000) * 1000 + index


def sample_hparams(family: Family, rng: np.random.Generator) -> dict[str, Any]:
    """Draw a run's hyperparameters."""
    hparams = {name: item(rng.choice(values)) for name, values in family.choices.items()}
    if family.reinforcement:
        hparams["learning_rate"] = RL_DEFAULT_LR[family.kind] * float(
            np.exp(rng.uniform(-1.1, 1.1))
        )
        hparams["gamma"] = item(rng.choice([0.98, 0.99, 0.995]))
    else:
        optimizer = str(rng.choice(family.optimizers))
        low, high = LR_RANGES[optimizer]
        hparams["optimizer"] = optimizer
        hparams["learning_rate"] = float(np.exp(rng.uniform(np.log(low), np.log(high))))
    return hparams


def plan_runs(
    batches: int, runs_per_family: int | None = None, families: list[str] | None = None
) -> list[RunSpec]:
    """The runs of a bank, ``batches`` batches each.

    Each family gets ``runs_per_family`` runs, or by default `RUNS_PER_FAMILY` of its group.
    """
    return plan_families(
        FAMILIES,
        families,
        lambda name: runs_per_family or RUNS_PER_FAMILY[FAMILIES[name].group],
        batches,
        sample_hparams,
    )


def plan_families(
    known: Mapping[str, Any],
    names: list[str] | None,
    runs: Callable[[str], int],
    batches: int,
    sample: Callable[[Any, np.random.Generator], dict[str, Any]],
) -> list[RunSpec]:
    """``runs(name)`` runs of each family ``name`` of ``known`` (default: all of them).

    Each run's hyperparameters are ``sample(family, rng)`` with ``rng`` seeded by `run_seed`, so
    a run depends only on its family's name and its number. Names not in ``known`` are refused.
    """
    names = names or list(known)
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ValueError(f"unknown families {unknown}; known: {list(known)}.")
    specs = []
    for name in names:
        for index in range(runs(name)):
            seed = run_seed(name, index)
            hparams = sample(known[name], np.random.default_rng(seed))
            specs.append(RunSpec(name, index, seed, batches, hparams))
    return specs


def item(value: Any) -> Any:
    """Numpy scalars -> Python scalars, for JSON."""
    return value.item() if hasattr(value, "item") else value
