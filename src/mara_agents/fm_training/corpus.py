"""The curve corpus as predictors read it: rows chosen by kind, curve and split, and bank joins.

The corpus (`coreenv_lab.corpus`, recorded by ``benchmarks/make_corpus.py``) is a curve bank whose
rows carry ``kind``, ``curve`` (``validation``, ``train`` or ``train_ema``) and ``split``
(``train`` or ``test``) in their config. It ships with `curvegen` (`curvegen.CORPUS`, 5.5 MB); a
recipe names it ``"bundled"``, or names the path of a corpus recorded elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from coreenv.curves import CurveBank, load_bank, pad_curves
from curvegen import CORPUS

__all__ = [
    "BUNDLED_CORPUS",
    "BUNDLED_KIND",
    "corpus_kinds",
    "corpus_rows",
    "join_banks",
    "load_corpus",
]

BUNDLED_CORPUS = "bundled"
"""How a recipe names the shipped corpus (`curvegen.CORPUS`)."""

BUNDLED_KIND = "classification"
"""The kind of the bundled bank's ID runs (validation cross-entropy of small classifiers): a
leave-one-kind-out fold that holds out this kind leaves them out of training as well."""


def load_corpus(path: str | Path = BUNDLED_CORPUS) -> CurveBank:
    """The corpus bank at ``path`` (`BUNDLED_CORPUS`: the shipped one).

    An absent file is named with the command that records it.
    """
    path = CORPUS if str(path) == BUNDLED_CORPUS else Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no curve corpus at {path}; record it with `python benchmarks/make_corpus.py "
            f"--out {path}` (about 20 min on 2 cores, resumable)."
        )
    return load_bank(path)


def corpus_kinds(bank: CurveBank) -> tuple[str, ...]:
    """The kinds of a corpus bank's rows, in order of first appearance."""
    return tuple(dict.fromkeys(json.loads(text)["kind"] for text in bank.config))


def corpus_rows(
    bank: CurveBank,
    kinds: Sequence[str] | None = None,
    curves: Sequence[str] | None = None,
    split: str | None = None,
    exclude_kinds: Sequence[str] = (),
) -> CurveBank:
    """The rows of a corpus bank with the given kinds, curves and split (None: any).

    Raises ValueError naming the valid values when a filter matches nothing.
    """
    configs = [json.loads(text) for text in bank.config]
    unknown = sorted(set(exclude_kinds) - {c.get("kind") for c in configs})
    if unknown:
        raise ValueError(
            f"corpus {bank.name!r} has no kind {unknown} to exclude; its kinds are "
            f"{sorted({c.get('kind') for c in configs})}."
        )
    keep = np.ones(len(bank), bool)
    for key, wanted in (("kind", kinds), ("curve", curves), ("split", [split] if split else None)):
        values = np.array([c.get(key) for c in configs])
        if wanted is not None:
            unknown = sorted(set(wanted) - set(values.tolist()))
            if unknown:
                raise ValueError(
                    f"corpus {bank.name!r} has no {key} {unknown}; its values are "
                    f"{sorted(set(values.tolist()))}."
                )
            keep &= np.isin(values, list(wanted))
        if key == "kind":
            keep &= ~np.isin(values, list(exclude_kinds))
    if not keep.any():
        raise ValueError(
            f"corpus {bank.name!r}: no row matches kinds={kinds}, curves={curves}, "
            f"split={split}, exclude_kinds={list(exclude_kinds)}."
        )
    return bank.subset(keep)


def join_banks(banks: Sequence[CurveBank], name: str) -> CurveBank:
    """One bank of the rows of ``banks`` in order (curves NaN-padded to the longest)."""
    rows = [bank.curve(i).losses for bank in banks for i in range(len(bank))]
    return CurveBank(
        pad_curves(rows),
        np.concatenate([bank.family for bank in banks]),
        np.concatenate([bank.config for bank in banks]),
        name=name,
    )
