"""Recording the corpus: a run cache that resumes, and the assembly of the cached runs into a bank.

Each finished run is one ``.npz`` (its validation and training curves and its seconds) under a
work folder, written atomically. The assembled corpus is a `coreenv.curves.CurveBank` with one
row per (run, curve): the validation loss, the raw per-minibatch training loss, and the training
loss smoothed by an exponential moving average (`EMA_ALPHA`, as a logger would write it). Each
row's config records its ``kind``, ``curve`` and ``split`` with the run's hyperparameters, so that
`corpus_rows` can select by any of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from coreenv.curves import CurveBank, curve_problem, pad_curves
from coreenv_lab.corpus.cache import cache_path, record_with
from coreenv_lab.corpus.families import CORPUS_FAMILIES, corpus_curves, split_of
from curvegen.specs import RunSpec

__all__ = ["CURVES", "EMA_ALPHA", "assemble_corpus", "ema", "record_corpus_run"]

EMA_ALPHA = 0.1
CURVES = ("validation", "train", "train_ema")
"""The curves of every run, in row order."""


def ema(values: np.ndarray, alpha: float = EMA_ALPHA) -> np.ndarray:
    """Exponential moving average ``s_k = (1 − α) s_{k−1} + α x_k``, started at ``s_0 = x_0``."""
    out = np.empty(len(values))
    running = values[0]
    for k, value in enumerate(values):
        running = (1 - alpha) * running + alpha * value
        out[k] = running
    return out


def record_corpus_run(spec: RunSpec, work: Path) -> tuple[RunSpec, float]:
    """Train one corpus run and cache its two curves (`coreenv_lab.corpus.cache.record_with`)."""

    def train() -> dict[str, np.ndarray]:
        curves = corpus_curves(spec)
        return {"validation": curves.validation, "train": curves.train}

    return record_with(train, spec, work)


def assemble_corpus(specs: list[RunSpec], work: Path) -> tuple[CurveBank, list[dict]]:
    """The bank of every cached run's curves, and the curves left out with the rule they break.

    A curve is judged as it will be stored (float32), by `coreenv.curves.curve_problem`.
    """
    rows, families, configs, splits, failed = [], [], [], [], []
    for spec in specs:
        with np.load(cache_path(work, spec)) as data:
            recorded = {"validation": data["validation"], "train": data["train"]}
        recorded["train_ema"] = ema(recorded["train"])
        for curve in CURVES:
            losses = recorded[curve]
            problem = curve_problem(losses.astype(np.float32).astype(np.float64))
            if problem is not None:
                failed.append(
                    {
                        "family": spec.family,
                        "index": spec.index,
                        "curve": curve,
                        "problem": problem.rule,
                    }
                )
                continue
            kind = CORPUS_FAMILIES[spec.family].kind
            config = {**spec.config(), "kind": kind, "curve": curve, "split": split_of(spec)}
            rows.append(losses)
            families.append(spec.family)
            configs.append(json.dumps(config, sort_keys=True))
            splits.append(split_of(spec))
    bank = CurveBank(pad_curves(rows), families, configs, splits, name="corpus")
    return bank, failed
