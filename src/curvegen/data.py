"""Datasets that ship inside scikit-learn, with fixed train/validation splits (no downloads)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

__all__ = ["DATASETS", "Dataset", "load"]

SPLIT_SEED = 0  # the same validation rows for every run of a dataset
VALIDATION_SHARE = 0.25


@dataclass(frozen=True)
class Dataset:
    """Features (float32, standardised on the training rows) and integer labels, split once."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    classes: int

    @property
    def features(self) -> int:
        """Input width."""
        return self.x_train.shape[1]


def _digits():
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    return x / 16.0, y, False  # pixel intensities 0..16: scaled, not standardised (images)


def _wine():
    from sklearn.datasets import load_wine

    return (*load_wine(return_X_y=True), True)


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer

    return (*load_breast_cancer(return_X_y=True), True)


def _generated():
    from sklearn.datasets import make_classification

    x, y = make_classification(
        n_samples=1200,
        n_features=20,
        n_informative=8,
        n_redundant=4,
        n_classes=4,
        class_sep=0.8,
        flip_y=0.03,
        random_state=SPLIT_SEED,
    )
    return x, y, True


DATASETS = {
    "digits": _digits,
    "wine": _wine,
    "breast_cancer": _breast_cancer,
    "generated": _generated,
}


@functools.cache
def load(name: str) -> Dataset:
    """Dataset ``name`` with its fixed split (cached per process)."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}.")
    x, y, standardise = DATASETS[name]()
    order = np.random.default_rng(SPLIT_SEED).permutation(len(y))
    cut = int(round(len(y) * (1 - VALIDATION_SHARE)))
    train, val = order[:cut], order[cut:]
    x = x.astype(np.float32)
    if standardise:
        mean, std = x[train].mean(axis=0), x[train].std(axis=0) + 1e-8
        x = (x - mean) / std
    return Dataset(
        x[train], y[train].astype(np.int64), x[val], y[val].astype(np.int64), int(y.max()) + 1
    )
