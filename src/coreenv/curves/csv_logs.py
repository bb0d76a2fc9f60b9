"""Bring your own curves: build a bank from a CSV of training logs, or from arrays.

The CSV is in the long format most loggers write, one row per logged loss::

    run,batch,loss,family,lr
    a,0,2.31,mlp,0.01
    a,1,2.12,mlp,0.01
    b,0,1.10,cnn,0.003

``run`` names the training run, ``batch`` counts batches trained (0 = before training; every
batch 0..n must be present), ``loss`` is the loss to reach targets on. ``family`` is optional
(default ``"custom"``); any other column is kept as the run's config (its first value per run).
"""

from __future__ import annotations

import csv
import json
import os
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from coreenv.curves.bank import CurveBank, pad_curves
from coreenv.errors import BankError

__all__ = ["bank_from_arrays", "bank_from_csv", "bank_to_csv"]

_RESERVED = ("run", "batch", "loss", "family")


def bank_from_arrays(
    curves: Sequence[np.ndarray],
    families: Sequence[str] | None = None,
    configs: Sequence[dict] | None = None,
    name: str = "custom",
) -> CurveBank:
    """A bank from curves of any lengths (``curves[i][n]`` = loss after n batches)."""
    curves = [np.asarray(c, np.float64).ravel() for c in curves]
    if not curves:
        raise BankError("bank_from_arrays needs at least one curve.")
    losses = pad_curves(curves)
    families = ["custom"] * len(curves) if families is None else list(families)
    texts = None if configs is None else [json.dumps(c, sort_keys=True) for c in configs]
    return CurveBank(losses, families, texts, name=name)


def bank_from_csv(path: str | os.PathLike, name: str | None = None) -> CurveBank:
    """A bank from a long-format CSV of training logs (see the module docstring).

    Raises `BankError` naming the file when it is missing, unreadable or not such a CSV.
    """
    name = name or os.path.splitext(os.path.basename(path))[0]
    if not os.path.isfile(path):
        raise BankError(f"no CSV of training logs at {str(path)!r}.")
    try:
        return _read_csv(path, name)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BankError(f"{str(path)!r} is not a readable CSV of training logs: {e}") from e


def _read_csv(path: str | os.PathLike, name: str) -> CurveBank:
    """`bank_from_csv` on a file known to exist."""
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("run", "batch", "loss") if c not in (reader.fieldnames or [])]
        if missing:
            raise BankError(f"{str(path)!r} lacks column(s) {missing}; needs run, batch, loss.")
        points: dict[str, dict[int, float]] = defaultdict(dict)
        extras: dict[str, dict] = {}
        for line, row in enumerate(reader, start=2):
            run = row["run"]
            try:
                batch, loss = int(row["batch"]), float(row["loss"])
            except ValueError as e:
                raise BankError(
                    f"{str(path)!r} line {line}: batch and loss must be numbers."
                ) from e
            if batch in points[run]:
                raise BankError(f"{str(path)!r} line {line}: run {run!r} logs batch {batch} twice.")
            points[run][batch] = loss
            extras.setdefault(
                run, {k: v for k, v in row.items() if k not in ("run", "batch", "loss")}
            )
    curves, families, configs = [], [], []
    for run, logged in points.items():
        if sorted(logged) != list(range(len(logged))):
            raise BankError(
                f"{str(path)!r}: run {run!r} must log every batch from 0 to its last, "
                f"got {len(logged)} batches up to {max(logged)}."
            )
        curves.append([logged[b] for b in range(len(logged))])
        config = dict(extras[run])
        families.append(config.pop("family", None) or "custom")
        configs.append({"run": run, **config})
    return bank_from_arrays(curves, families, configs, name)


def bank_to_csv(bank: CurveBank, path: str | os.PathLike) -> None:
    """Write ``bank`` in the long CSV format (config entries become columns)."""
    configs = [json.loads(text) for text in bank.config]
    extra = sorted({k for c in configs for k in c if k not in _RESERVED})
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*_RESERVED, *extra])
        for i, config in enumerate(configs):
            run = config.get("run", str(i))
            for batch, loss in enumerate(bank.curve(i).losses):
                writer.writerow(
                    [
                        run,
                        batch,
                        repr(float(loss)),
                        bank.family[i],
                        *(config.get(k, "") for k in extra),
                    ]
                )
