"""The run cache of a recording: one ``.npz`` per finished run, so an interrupted one resumes.

A cached run holds ``losses`` (its curve) and ``seconds`` (its training time). `record` is what a
worker process of `benchmarks/make_curve_bank.py` runs; it lives in this package, not in the
script, so that a process pool can pickle it by its importable name.
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import numpy as np

from curvegen import curve_of
from curvegen.specs import RunSpec

__all__ = ["cache_path", "load_cached", "record"]


def cache_path(work: Path, spec: RunSpec) -> Path:
    """Where the finished run ``spec`` is cached under the work folder ``work``."""
    return work / spec.family / f"{spec.index:04d}-{spec.batches}.npz"


def record(spec: RunSpec, work: Path) -> tuple[RunSpec, float]:
    """Train one run with one torch thread (reproducible from its seed) and cache its curve.

    The file is written atomically, so a killed worker never leaves a half-written run.
    """
    import torch

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=UserWarning)
    start = time.perf_counter()
    losses = curve_of(spec)
    seconds = time.perf_counter() - start
    path = cache_path(work, spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, losses=losses, seconds=seconds)
    os.replace(partial, path)
    return spec, seconds


def load_cached(work: Path, spec: RunSpec) -> tuple[np.ndarray, float]:
    """The cached run ``spec``: its (batches + 1,) losses and its training seconds."""
    with np.load(cache_path(work, spec)) as data:
        return data["losses"], float(data["seconds"])
