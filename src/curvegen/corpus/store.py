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
import os
import time
import warnings
from pathlib import Path

import numpy as np

from coreenv.curves import CurveBank, curve_problem, pad_curves
from curvegen.corpus.families import CORPUS_FAMILIES, corpus_curves, split_of
from curvegen.specs import RunSpec

__all__ = ["CURVES", "EMA_ALPHA", "assemble_corpus", "cache_path", "ema", "record_corpus_run"]

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


def cache_path(work: Path, spec: RunSpec) -> Path:
    """Where the finished corpus run ``spec`` is cached under ``work``."""
    return Path(work) / spec.family / f"{spec.index:04d}-{spec.batches}.npz"


def record_corpus_run(spec: RunSpec, work: Path) -> tuple[RunSpec, float]:
    """Train one run on one torch thread (reproducible from its seed) and cache its curves."""
    import torch

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=UserWarning)
    start = time.perf_counter()
    curves = corpus_curves(spec)
    seconds = time.perf_counter() - start
    path = cache_path(work, spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, validation=curves.validation, train=curves.train, seconds=seconds)
    os.replace(partial, path)
    return spec, seconds


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
