"""Recorded training runs: the families, their models and data, and the code that trains them.

Shared by `benchmarks/make_curve_bank.py` (which records the bundled curve bank) and the `live`
curve source (which trains a run one batch per served step). Needs the ``agents`` extra to train;
importing the package does not import torch.

``task_set="live"`` reaches coreenv through the ``coreenv.task_sets`` entry point (declared in
``pyproject.toml``), which names `live_task_set`: coreenv never imports this package by name.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from coreenv import ConfigError
from coreenv.curves import CurveBank, CurveSource, concat_banks, load_bank, named_task_set
from curvegen.data import VALIDATION_SHARE
from curvegen.rl import FLOOR, INITIAL_EPISODES, SMOOTHING, STEPS_PER_BATCH, rl_curve
from curvegen.specs import FAMILIES, GROUPS, Family, RunSpec, plan_runs

__all__ = [
    "CORPUS",
    "CORPUS_TASK_CURVES",
    "FAMILIES",
    "GROUPS",
    "LOSS_DEFINITIONS",
    "Family",
    "RunSpec",
    "corpus_task_set",
    "corpus_test_task_set",
    "corpus_train_task_set",
    "mixed_train_task_set",
    "curve_of",
    "live_task_set",
    "plan_runs",
]

CORPUS = Path(__file__).resolve().parent / "data" / "corpus.npz"
"""The recorded curve corpus (`coreenv_lab.corpus`; ``benchmarks/make_corpus.py`` writes it here),
with its manifest ``corpus.json`` beside it."""

LOSS_DEFINITIONS = {
    "supervised": f"cross-entropy on the dataset's fixed {VALIDATION_SHARE:.0%} validation split, "
    "after every batch (index 0: before training); batches drawn with replacement",
    "rl": f"1 - normalised mean return of the last {SMOOTHING} completed training episodes, "
    f"floored at {np.format_float_scientific(FLOOR, trim='-', exp_digits=1)}; one batch = "
    f"{STEPS_PER_BATCH} environment steps; index 0: the untrained policy over {INITIAL_EPISODES} "
    "episodes",
}
"""What "the loss" of a recorded curve is, per kind of run: the one statement of it, built from
the constants the training code uses; the bank's manifest records it under ``loss``."""


def curve_of(spec: RunSpec) -> np.ndarray:
    """Train ``spec``; return its (batches + 1,) curve (the loss of `LOSS_DEFINITIONS`)."""
    if FAMILIES[spec.family].reinforcement:
        return rl_curve(spec)
    from curvegen.supervised import supervised_curve  # torch: only when a run trains

    return supervised_curve(spec)


CORPUS_TASK_CURVES = ("validation", "train_ema")
"""The corpus curves tasks replay: validation losses and smoothed training losses, as a scheduler
would watch them. Raw per-minibatch training losses are left out: one lucky minibatch would count
as reaching the target."""


@functools.cache
def corpus_task_set(split: str) -> CurveBank:
    """The corpus runs of one split (``"train"`` or ``"test"``), every kind of training, as tasks.

    ``task_set="corpus_train"`` / ``"corpus_test"`` reach it through the ``coreenv.task_sets``
    entry points; the split rule is the corpus's own (docs/curves.md).
    """
    bank = load_bank(CORPUS)
    curves = np.array([json.loads(config)["curve"] for config in bank.config])
    rows = (bank.split == split) & np.isin(curves, CORPUS_TASK_CURVES)
    return bank.subset(rows, name=f"corpus_{split}")


def corpus_train_task_set() -> CurveBank:
    """The factory of ``task_set="corpus_train"``: the corpus's training runs."""
    return corpus_task_set("train")


def corpus_test_task_set() -> CurveBank:
    """The factory of ``task_set="corpus_test"``: the corpus's held-out runs."""
    return corpus_task_set("test")


def mixed_train_task_set() -> CurveBank:
    """The factory of ``task_set="mixed_train"``: the ID and the corpus's training runs together.

    384 + 918 rows, each equally likely: training across the world without leaving the
    benchmark's own kinds.
    """
    return concat_banks([named_task_set("id_train"), corpus_task_set("train")], "mixed_train")


def live_task_set() -> CurveSource:
    """The factory of ``task_set="live"``: tasks that really train (torch and scikit-learn)."""
    try:
        from curvegen.live import LiveCurves
    except ImportError as e:
        raise ConfigError(
            "EnvConfig.task_set 'live' trains real torch models and needs the agents extra: "
            f"pip install 'coreenv[agents]' ({e})."
        ) from e
    return LiveCurves()
