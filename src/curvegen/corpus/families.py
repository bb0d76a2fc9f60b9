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

from curvegen.corpus.training import SCHEDULES, RunCurves, train_run
from curvegen.specs import LR_RANGES, RunSpec, run_seed

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
        network: a key of `curvegen.corpus.networks.NETWORKS`, or the RL learner.
        problem: a key of `curvegen.corpus.problems.PROBLEMS`, or an RL environment.
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


def _f(name: str, kind: str, network: str, problem: str, **settings) -> CorpusFamily:
    return CorpusFamily(name, kind, network, problem, **settings)


_WIDTHS = {"width": (16, 32, 64, 128)}
_DEEP = {"width": (16, 32, 64), "depth": (1, 2, 3)}
_ADAPTIVE = ("adam", "adamw", "rmsprop")

_FAMILY_LIST = [
    # classification: cross-entropy
    _f("mlp-digits_noisy", "classification", "mlp", "digits_noisy", choices=_DEEP),
    _f(
        "cnn-digits",
        "classification",
        "digits",
        "digits",
        shape={"kind": "cnn"},
        choices={"channels": (4, 8, 16)},
    ),
    _f("mlp-iris", "classification", "mlp", "iris", choices={"width": (8, 16, 32)}),
    _f("mlp-moons", "classification", "mlp", "moons", choices=_DEEP),
    _f("mlp-circles", "classification", "mlp", "circles", choices=_DEEP),
    _f("logreg-blobs", "classification", "mlp", "blobs", shape={"depth": 0}),
    _f("mlp-blobs", "classification", "mlp", "blobs", choices=_WIDTHS),
    _f("mlp-quantiles", "classification", "mlp", "quantiles", choices=_DEEP),
    _f("mlp-hastie", "classification", "mlp", "hastie", choices=_DEEP),
    _f("logreg-wine", "classification", "mlp", "wine", shape={"depth": 0}),
    _f(
        "deep-breast_cancer",
        "classification",
        "mlp",
        "breast_cancer",
        choices={"width": (16, 32), "depth": (3, 4)},
    ),
    # multilabel: binary cross-entropy per label
    _f("mlp-multilabel", "multilabel", "mlp", "multilabel", choices=_DEEP),
    _f("linear-multilabel", "multilabel", "mlp", "multilabel", shape={"depth": 0}),
    # regression: mean squared error on standardised targets
    _f("mlp-diabetes", "regression", "mlp", "diabetes", choices=_WIDTHS, lr_scale=0.3),
    _f("linear-diabetes", "regression", "mlp", "diabetes", shape={"depth": 0}, lr_scale=0.3),
    _f("mlp-friedman1", "regression", "mlp", "friedman1", choices=_DEEP, lr_scale=0.3),
    _f("mlp-friedman2", "regression", "mlp", "friedman2", choices=_DEEP, lr_scale=0.3),
    _f("mlp-friedman3", "regression", "mlp", "friedman3", choices=_DEEP, lr_scale=0.3),
    _f("linear-linear", "regression", "mlp", "linear", shape={"depth": 0}, lr_scale=0.1),
    _f("mlp-sine", "regression", "mlp", "sine", choices=_DEEP, lr_scale=0.3),
    # reconstruction: autoencoders, mean squared error
    _f(
        "ae-digits_images",
        "reconstruction",
        "autoencoder",
        "digits_images",
        choices={"width": (32, 64), "bottleneck": (2, 4, 8, 16)},
        lr_scale=0.3,
    ),
    _f(
        "ae-swiss_roll",
        "reconstruction",
        "autoencoder",
        "swiss_roll",
        choices={"width": (16, 32, 64), "bottleneck": (1, 2)},
        lr_scale=0.3,
    ),
    _f(
        "ae-low_rank",
        "reconstruction",
        "autoencoder",
        "low_rank",
        choices={"width": (32, 64), "bottleneck": (2, 4, 8)},
        lr_scale=0.3,
    ),
    _f(
        "ae-breast_cancer_features",
        "reconstruction",
        "autoencoder",
        "breast_cancer_features",
        choices={"width": (16, 32, 64), "bottleneck": (2, 4, 8)},
        lr_scale=0.3,
    ),
    # generative: negative log-likelihood or its evidence bound, in nats per example
    _f(
        "vae-binary_digits",
        "generative",
        "vae",
        "binary_digits",
        choices={"width": (32, 64, 128), "latent": (2, 4, 8)},
        optimizers=_ADAPTIVE,
    ),
    _f(
        "vae-soft_digits",
        "generative",
        "vae",
        "soft_digits",
        choices={"width": (32, 64, 128), "latent": (2, 4, 8)},
        optimizers=_ADAPTIVE,
    ),
    _f("fvsbn-binary_digits", "generative", "fvsbn", "binary_digits", optimizers=_ADAPTIVE),
    _f(
        "pair-moons_tokens",
        "generative",
        "pair",
        "moons_tokens",
        choices={"width": (16, 32, 64)},
        optimizers=_ADAPTIVE,
    ),
    # language: next-token cross-entropy on generated texts
    _f(
        "ngram-text_markov",
        "language",
        "token_mlp",
        "text_markov",
        choices={"embed": (4, 8, 16), "width": (32, 64, 128)},
    ),
    _f(
        "transformer-text_markov",
        "language",
        "transformer",
        "text_markov",
        choices={"dim": (16, 32), "depth": (1, 2)},
        optimizers=_ADAPTIVE,
        lr_scale=0.5,
    ),
    _f(
        "lstm-text_words",
        "language",
        "recurrent",
        "text_words",
        choices={"hidden": (16, 32, 64)},
        optimizers=_ADAPTIVE,
    ),
    _f(
        "transformer-text_words",
        "language",
        "transformer",
        "text_words",
        choices={"dim": (16, 32), "depth": (1, 2)},
        optimizers=_ADAPTIVE,
        lr_scale=0.5,
    ),
    _f(
        "ngram-text_arithmetic",
        "language",
        "token_mlp",
        "text_arithmetic",
        choices={"embed": (4, 8, 16), "width": (32, 64, 128), "depth": (1, 2)},
    ),
    _f(
        "lstm-text_brackets",
        "language",
        "recurrent",
        "text_brackets",
        choices={"hidden": (16, 32, 64)},
        optimizers=_ADAPTIVE,
    ),
    # forecasting: next value of a standardised series, mean squared error
    _f("mlp-series_sines", "forecasting", "mlp", "series_sines", choices=_DEEP, lr_scale=0.3),
    _f(
        "gru-series_ar2",
        "forecasting",
        "recurrent",
        "series_ar2",
        shape={"cell": "gru"},
        choices={"hidden": (8, 16, 32)},
        optimizers=_ADAPTIVE,
    ),
    _f(
        "mlp-series_mackey_glass",
        "forecasting",
        "mlp",
        "series_mackey_glass",
        choices=_DEEP,
        lr_scale=0.3,
    ),
    _f(
        "gru-series_mackey_glass",
        "forecasting",
        "recurrent",
        "series_mackey_glass",
        shape={"cell": "gru"},
        choices={"hidden": (8, 16, 32)},
        optimizers=_ADAPTIVE,
    ),
    _f(
        "linear-series_seasonal",
        "forecasting",
        "mlp",
        "series_seasonal",
        shape={"depth": 0},
        lr_scale=0.1,
    ),
    # recommendation: rating regression from (user, item) embeddings
    _f(
        "mf-ratings_rank3",
        "recommendation",
        "factorisation",
        "ratings_rank3",
        choices={"dim": (2, 4, 8, 16)},
        optimizers=_ADAPTIVE,
        lr_scale=3.0,
    ),
    _f(
        "mf-ratings_rank10",
        "recommendation",
        "factorisation",
        "ratings_rank10",
        choices={"dim": (4, 8, 16, 32)},
        optimizers=_ADAPTIVE,
        lr_scale=3.0,
    ),
    _f(
        "ncf-ratings_rank3",
        "recommendation",
        "factorisation",
        "ratings_rank3",
        choices={"dim": (4, 8, 16), "width": (16, 32, 64)},
        optimizers=_ADAPTIVE,
    ),
    # rl: 1 - normalised return
    _f(
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
    _f(
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
    _f(
        "a2c-acrobot",
        "rl",
        "actor_critic",
        "Acrobot-v1",
        choices={"hidden": (32, 64), "gamma": (0.99,), "entropy": (0.0, 0.01), "critic": (True,)},
        lr_range=(3e-4, 3e-3),
    ),
    _f(
        "pg-bandit",
        "rl",
        "policy_gradient",
        "bandit",
        choices={"arms": (5, 10, 20), "reward_noise": (0.5, 1.0, 2.0)},
        lr_range=(0.02, 0.5),
    ),
    _f(
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
    hparams = {name: _item(rng.choice(values)) for name, values in family.choices.items()}
    if family.kind == "rl":
        low, high = family.lr_range
        hparams["learning_rate"] = float(math.exp(rng.uniform(math.log(low), math.log(high))))
        return hparams
    optimizer = str(rng.choice(family.optimizers))
    low, high = (family.lr_scale * bound for bound in LR_RANGES[optimizer])
    hparams["optimizer"] = optimizer
    hparams["learning_rate"] = float(math.exp(rng.uniform(math.log(low), math.log(high))))
    hparams["batch_size"] = _item(rng.choice(family.batch_sizes))
    hparams["schedule"] = str(rng.choice(SCHEDULES))
    return hparams


def plan_corpus(
    runs_per_family: int = RUNS_PER_FAMILY,
    batches: int = BATCHES,
    families: list[str] | None = None,
) -> list[RunSpec]:
    """The runs of the corpus: ``runs_per_family`` of each family, ``batches`` batches each."""
    names = families or list(CORPUS_FAMILIES)
    unknown = sorted(set(names) - set(CORPUS_FAMILIES))
    if unknown:
        raise ValueError(f"unknown corpus families {unknown}; known: {list(CORPUS_FAMILIES)}.")
    specs = []
    for name in names:
        for index in range(runs_per_family):
            seed = run_seed(name, index)
            hparams = sample_hparams(CORPUS_FAMILIES[name], np.random.default_rng(seed))
            specs.append(RunSpec(name, index, seed, batches, hparams))
    return specs


def split_of(spec: RunSpec) -> str:
    """``"test"`` for every `TEST_EVERY`-th run of a family, else ``"train"``."""
    return "test" if spec.index % TEST_EVERY == 0 else "train"


def corpus_curves(spec: RunSpec) -> RunCurves:
    """Train the corpus run ``spec``; its validation and per-minibatch training curves."""
    family = CORPUS_FAMILIES[spec.family]
    if family.kind == "rl":
        from curvegen.corpus.reinforcement import rl_run

        return rl_run(spec, family.problem)
    shape = {**family.shape, **{k: spec.hparams[k] for k in family.choices}}
    return train_run(spec, family.problem, family.network, shape)


def _item(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
