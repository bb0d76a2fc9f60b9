"""The run cache of a recording: one ``.npz`` per finished run, so an interrupted one resumes.

A cached run holds ``losses`` (its curve) and ``seconds`` (its training time). `record` is what a
worker process of `benchmarks/make_curve_bank.py` runs; it lives in this package, not in the
script, so that a process pool can pickle it by its importable name.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from curvegen import curve_of
from curvegen.specs import RunSpec

__all__ = ["cache_path", "is_cached", "load_cached", "record", "record_with"]


def cache_path(work: Path, spec: RunSpec) -> Path:
    """Where the finished run ``spec`` is cached under the work folder ``work``."""
    return work / spec.family / f"{spec.index:04d}-{spec.batches}.npz"


def is_cached(work: Path, spec: RunSpec) -> bool:
    """Whether ``spec`` has a finished run in ``work`` recorded with the same configuration.

    A run cached under another configuration (the family's draws changed since) is not: its
    curve would be labelled with hyperparameters it was not trained with.
    """
    path = cache_path(work, spec)
    if not path.is_file():
        return False
    with np.load(path) as data:
        return "config" in data.files and str(data["config"]) == _config_text(spec)


def record(spec: RunSpec, work: Path) -> tuple[RunSpec, float]:
    """Train one bundled-bank run and cache its curve (`record_with`)."""
    return record_with(lambda: {"losses": curve_of(spec)}, spec, work)


def record_with(
    train: Callable[[], dict[str, np.ndarray]], spec: RunSpec, work: Path
) -> tuple[RunSpec, float]:
    """Run ``train`` on one torch thread (reproducible from the run's seed) and cache its arrays.

    The file holds the arrays, the training ``seconds`` and the run's ``config``; it is written
    atomically, so a killed worker never leaves a half-written run.
    """
    import torch

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=UserWarning)
    start = time.perf_counter()
    arrays = train()
    seconds = time.perf_counter() - start
    path = cache_path(work, spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, **arrays, seconds=seconds, config=_config_text(spec))
    os.replace(partial, path)
    return spec, seconds


def _config_text(spec: RunSpec) -> str:
    return json.dumps(spec.config(), sort_keys=True)


def load_cached(work: Path, spec: RunSpec) -> tuple[np.ndarray, float]:
    """The cached run ``spec``: its (batches + 1,) losses and its training seconds."""
    with np.load(cache_path(work, spec)) as data:
        return data["losses"], float(data["seconds"])
