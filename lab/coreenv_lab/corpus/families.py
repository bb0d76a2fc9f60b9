"""The families of the curve corpus, grouped by *kind* of training, and how their runs are drawn.

A corpus family is one (network, problem) pair of one kind (`KINDS`); a run draws its shape,
optimiser, learning rate, batch size and learning-rate schedule from its seed (`plan_corpus`),
so every run is reproducible from its `RunSpec`. Runs with ``index % TEST_EVERY == 0`` form the
``test`` split, the others ``train`` (design: docs/curves.md, "The curve corpus").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coreenv_lab.corpus.training import SCHEDULES, RunCurves, train_run
from curvegen.specs import LR_RANGES, RunSpec, item, plan_families

__all__ = [
    "CORPUS_FAMILIES",
    "KINDS",
    "RUNS_PER_FAMILY",
    "TEST_EVERY",
    "CorpusFamily",
    "corpus_curves",
    "plan_corpus",
    "split_of",
]

KINDS = (
    "classification",
    "multilabel",
    "regression",
    "reconstruction",
    "generative",
    "language",
    "forecasting",
    "recommendation",
    "rl",
)
"""Kinds of training: the folds of leave-one-kind-out evaluation."""

RUNS_PER_FAMILY = 15
TEST_EVERY = 3
BATCHES = 800
"""Batches per run: a prefix of up to 300 and a future of up to 500 (the predictors' cap)."""


@dataclass(frozen=True)
class CorpusFamily:
    """One network on one problem (or one learner on one environment, for ``rl``).

    Attributes:
        name: ``"<network>-<problem>"`` style label, unique in the corpus.
        kind: one of `KINDS`.
        network: a key of `coreenv_lab.corpus.networks.NETWORKS`, or the RL learner.
        problem: a key of `coreenv_lab.corpus.problems.PROBLEMS`, or an RL environment.
        shape: fixed network arguments.
        choices: hyperparameter -> values a run draws from uniformly (network shape for
            supervised runs, learner settings for RL runs).
        optimizers: optimisers a supervised run draws from.
        lr_scale: multiplies the optimiser's learning-rate range (`curvegen.specs.LR_RANGES`);
            for RL, the learning rate is drawn log-uniform over ``lr_range``.
    """

    name: str
    kind: str
    network: str
    problem: str
    shape: dict[str, Any] = field(default_factory=dict)
    choices: dict[str, tuple] = field(default_factory=dict)
    optimizers: tuple[str, ...] = ("sgd", "momentum", "adam", "rmsprop", "adamw")
    lr_scale: float = 1.0
    lr_range: tuple[float, float] = (1e-3, 1e-2)
    batch_sizes: tuple[int, ...] = (16, 32, 64, 128)


_WIDTHS = {"width": (16, 32, 64, 128)}
_DEEP = {"width": (16, 32, 64), "depth": (1, 2, 3)}
_ADAPTIVE = ("adam", "adamw", "rmsprop")

_FAMILY_LIST = [
    # classification: cross-entropy
    CorpusFamily("mlp-digits_noisy", "classification", "mlp", "digits_noisy", choices=_DEEP),
    CorpusFamily(
        "cnn-digits",
        "classification",
        "digits",
        "digits",
        shape={"kind": "cnn"},
        choices={"channels": (4, 8, 16)},
    ),
    CorpusFamily("mlp-iris", "classification", "mlp", "iris", choices={"width": (8, 16, 32)}),
    CorpusFamily("mlp-moons", "classification", "mlp", "moons", choices=_DEEP),
    CorpusFamily("mlp-circles", "classification", "mlp", "circles", choices=_DEEP),
    CorpusFamily("logreg-blobs", "classification", "mlp", "blobs", shape={"depth": 0}),
    CorpusFamily("mlp-blobs", "classification", "mlp", "blobs", choices=_WIDTHS),
    CorpusFamily("mlp-quantiles", "classification", "mlp", "quantiles", choices=_DEEP),
    CorpusFamily("mlp-hastie", "classification", "mlp", "hastie", choices=_DEEP),
    CorpusFamily("logreg-wine", "classification", "mlp", "wine", shape={"depth": 0}),
    CorpusFamily(
        "deep-breast_cancer",
        "classification",
        "mlp",
        "breast_cancer",
        choices={"width": (16, 32), "depth": (3, 4)},
    ),
    # multilabel: binary cross-entropy per label
    CorpusFamily("mlp-multilabel", "multilabel", "mlp", "multilabel", choices=_DEEP),
    CorpusFamily("linear-multilabel", "multilabel", "mlp", "multilabel", shape={"depth": 0}),
    # regression: mean squared error on standardised targets
    CorpusFamily("mlp-diabetes", "regression", "mlp", "diabetes", choices=_WIDTHS, lr_scale=0.3),
    CorpusFamily(
        "linear-diabetes", "regression", "mlp", "diabetes", shape={"depth": 0}, lr_scale=0.3
    ),
    CorpusFamily("mlp-friedman1", "regression", "mlp", "friedman1", choices=_DEEP, lr_scale=0.3),
    CorpusFamily("mlp-friedman2", "regression", "mlp", "friedman2", choices=_DEEP, lr_scale=0.3),
    CorpusFamily("mlp-friedman3", "regression", "mlp", "friedman3", choices=_DEEP, lr_scale=0.3),
    CorpusFamily("linear-linear", "regression", "mlp", "linear", shape={"depth": 0}, lr_scale=0.1),
    CorpusFamily("mlp-sine", "regression", "mlp", "sine", choices=_DEEP, lr_scale=0.3),
    # reconstruction: autoencoders, mean squared error
    CorpusFamily(
        "ae-digits_images",
        "reconstruction",
        "autoencoder",
        "digits_images",
        choices={"width": (32, 64), "bottleneck": (2, 4, 8, 16)},
        lr_scale=0.3,
    ),
    CorpusFamily(
        "ae-swiss_roll",
        "reconstruction",
        "autoencoder",
        "swiss_roll",
        choices={"width": (16, 32, 64), "bottleneck": (1, 2)},
        lr_scale=0.3,
    ),
    CorpusFamily(
        "ae-low_rank",
        "reconstruction",
        "autoencoder",
        "low_rank",
        choices={"width": (32, 64), "bottleneck": (2, 4, 8)},
        lr_scale=0.3,
    ),
    CorpusFamily(
        "ae-breast_cancer_features",
        "reconstruction",
        "autoencoder",
        "breast_cancer_features",
        choices={"width": (16, 32, 64), "bottleneck": (2, 4, 8)},
        lr_scale=0.3,
    ),
    # generative: negative log-likelihood or its evidence bound, in nats per example
    CorpusFamily(
        "vae-binary_digits",
        "generative",
        "vae",
        "binary_digits",
        choices={"width": (32, 64, 128), "latent": (2, 4, 8)},
        optimizers=_ADAPTIVE,
    ),
    CorpusFamily(
        "vae-soft_digits",
        "generative",
        "vae",
        "soft_digits",
        choices={"width": (32, 64, 128), "latent": (2, 4, 8)},
        optimizers=_ADAPTIVE,
    ),
    CorpusFamily(
        "fvsbn-binary_digits", "generative", "fvsbn", "binary_digits", optimizers=_ADAPTIVE
    ),
    CorpusFamily(
        "pair-moons_tokens",
        "generative",
        "pair",
        "moons_tokens",
        choices={"width": (16, 32, 64)},
        optimizers=_ADAPTIVE,
    ),
    # language: next-token cross-entropy on generated texts
    CorpusFamily(
        "ngram-text_markov",
        "language",
        "token_mlp",
        "text_markov",
        choices={"embed": (4, 8, 16), "width": (32, 64, 128)},
    ),
    CorpusFamily(
        "transformer-text_markov",
        "language",
        "transformer",
        "text_markov",
        choices={"dim": (16, 32), "depth": (1, 2)},
        optimizers=_ADAPTIVE,
        lr_scale=0.5,
    ),
    CorpusFamily(
        "lstm-text_words",
        "language",
        "recurrent",
        "text_words",
        choices={"hidden": (16, 32, 64)},
        optimizers=_ADAPTIVE,
    ),
    CorpusFamily(
        "transformer-text_words",
        "language",
        "transformer",
        "text_words",
        choices={"dim": (16, 32), "depth": (1, 2)},
        optimizers=_ADAPTIVE,
        lr_scale=0.5,
    ),
    CorpusFamily(
        "ngram-text_arithmetic",
        "language",
        "token_mlp",
        "text_arithmetic",
        choices={"embed": (4, 8, 16), "width": (32, 64, 128), "depth": (1, 2)},
    ),
    CorpusFamily(
        "lstm-text_brackets",
        "language",
        "recurrent",
        "text_brackets",
        choices={"hidden": (16, 32, 64)},
        optimizers=_ADAPTIVE,
    ),
    # forecasting: next value of a standardised series, mean squared error
    CorpusFamily(
        "mlp-series_sines", "forecasting", "mlp", "series_sines", choices=_DEEP, lr_scale=0.3
    ),
    CorpusFamily(
        "gru-series_ar2",
        "forecasting",
        "recurrent",
        "series_ar2",
        shape={"cell": "gru"},
        choices={"hidden": (8, 16, 32)},
        optimizers=_ADAPTIVE,
    ),
    CorpusFamily(
        "mlp-series_mackey_glass",
        "forecasting",
        "mlp",
        "series_mackey_glass",
        choices=_DEEP,
        lr_scale=0.3,
    ),
    CorpusFamily(
        "gru-series_mackey_glass",
        "forecasting",
        "recurrent",
        "series_mackey_glass",
        shape={"cell": "gru"},
        choices={"hidden": (8, 16, 32)},
        optimizers=_ADAPTIVE,
    ),
    CorpusFamily(
        "linear-series_seasonal",
        "forecasting",
        "mlp",
        "series_seasonal",
        shape={"depth": 0},
        lr_scale=0.1,
    ),
    # recommendation: rating regression from (user, item) embeddings
    CorpusFamily(
        "mf-ratings_rank3",
        "recommendation",
        "factorisation",
        "ratings_rank3",
        choices={"dim": (2, 4, 8, 16)},
        optimizers=_ADAPTIVE,
        lr_scale=3.0,
    ),
    CorpusFamily(
        "mf-ratings_rank10",
        "recommendation",
        "factorisation",
        "ratings_rank10",
        choices={"dim": (4, 8, 16, 32)},
        optimizers=_ADAPTIVE,
        lr_scale=3.0,
    ),
    CorpusFamily(
        "ncf-ratings_rank3",
        "recommendation",
        "factorisation",
        "ratings_rank3",
        choices={"dim": (4, 8, 16), "width": (16, 32, 64)},
        optimizers=_ADAPTIVE,
    ),
    # rl: 1 - normalised return
    CorpusFamily(
        "a2c-cartpole",
        "rl",
        "actor_critic",
        "CartPole-v1",
        choices={
            "hidden": (32, 64),
            "gamma": (0.98, 0.99),
            "entropy": (0.0, 0.01),
            "critic": (True,),
        },
        lr_range=(3e-4, 3e-3),
    ),
    CorpusFamily(
        "reinforce-cartpole",
        "rl",
        "actor_critic",
        "CartPole-v1",
        choices={
            "hidden": (32, 64),
            "gamma": (0.98, 0.99),
            "entropy": (0.0, 0.01),
            "critic": (False,),
        },
        lr_range=(3e-4, 3e-3),
    ),
    CorpusFamily(
        "a2c-acrobot",
        "rl",
        "actor_critic",
        "Acrobot-v1",
        choices={"hidden": (32, 64), "gamma": (0.99,), "entropy": (0.0, 0.01), "critic": (True,)},
        lr_range=(3e-4, 3e-3),
    ),
    CorpusFamily(
        "pg-bandit",
        "rl",
        "policy_gradient",
        "bandit",
        choices={"arms": (5, 10, 20), "reward_noise": (0.5, 1.0, 2.0)},
        lr_range=(0.02, 0.5),
    ),
    CorpusFamily(
        "pg-gridworld",
        "rl",
        "policy_gradient",
        "gridworld",
        choices={"walls": (0.0, 0.1, 0.2), "baseline": (0.0, 0.2)},
        lr_range=(0.05, 1.0),
    ),
]
CORPUS_FAMILIES = {family.name: family for family in _FAMILY_LIST}


def sample_hparams(family: CorpusFamily, rng: np.random.Generator) -> dict[str, Any]:
    """Draw a run's hyperparameters (JSON-serialisable)."""
    hparams = {name: item(rng.choice(values)) for name, values in family.choices.items()}
    if family.kind == "rl":
        low, high = family.lr_range
        hparams["learning_rate"] = float(math.exp(rng.uniform(math.log(low), math.log(high))))
        return hparams
    optimizer = str(rng.choice(family.optimizers))
    low, high = (family.lr_scale * bound for bound in LR_RANGES[optimizer])
    hparams["optimizer"] = optimizer
    hparams["learning_rate"] = float(math.exp(rng.uniform(math.log(low), math.log(high))))
    hparams["batch_size"] = item(rng.choice(family.batch_sizes))
    hparams["schedule"] = str(rng.choice(SCHEDULES))
    return hparams


def plan_corpus(
    runs_per_family: int = RUNS_PER_FAMILY,
    batches: int = BATCHES,
    families: list[str] | None = None,
) -> list[RunSpec]:
    """The runs of the corpus: ``runs_per_family`` of each family, ``batches`` batches each."""
    return plan_families(
        CORPUS_FAMILIES, families, lambda _: runs_per_family, batches, sample_hparams
    )


def split_of(spec: RunSpec) -> str:
    """``"test"`` for every `TEST_EVERY`-th run of a family, else ``"train"``."""
    return "test" if spec.index % TEST_EVERY == 0 else "train"


def corpus_curves(spec: RunSpec) -> RunCurves:
    """Train the corpus run ``spec``; its validation and per-minibatch training curves."""
    family = CORPUS_FAMILIES[spec.family]
    if family.kind == "rl":
        from coreenv_lab.corpus.reinforcement import rl_run

        return rl_run(spec, family.problem)
    shape = {**family.shape, **{k: spec.hparams[k] for k in family.choices}}
    return train_run(spec, family.problem, family.network, shape)
