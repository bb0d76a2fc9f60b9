"""Curve banks: recorded loss curves in the design §3 `.npz` format, validated on load.

Format (one row per training run):

=========  ===========  ===========================================================
key        shape/dtype  meaning
=========  ===========  ===========================================================
losses     [N, L] float loss after n batches, n = 0..; rows NaN-padded at the end
family     [N] str      model–dataset configuration of the run
config     [N] str      JSON text: hyperparameters, seed, anything else of the run
split      [N] str      optional: which split a run belongs to (e.g. "train", "test")
=========  ===========  ===========================================================

The format's two rules live here, once: `curve_problem` says whether a curve is usable (every
validator calls it) and `pad_curves` makes the NaN-padded ``losses`` (every builder calls it).
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib.npyio import NpzFile

from coreenv.context import Description, describe
from coreenv.curves.source import Curve, CurveSource
from coreenv.errors import BankError

__all__ = [
    "NEVER_FALLS",
    "NOT_A_CURVE",
    "NOT_POSITIVE",
    "REQUIRED_KEYS",
    "CurveBank",
    "CurveProblem",
    "curve_problem",
    "load_bank",
    "concat_banks",
    "pad_curves",
    "save_bank",
]

REQUIRED_KEYS = ("losses", "family", "config")
_NOT_A_BANK = (
    "{path!r} is not a curve bank: not an .npz archive as save_bank writes (docs/curves.md, "
    "'Bring your own curves'; a CSV of training logs needs a .csv name)."
)


class CurveBank(CurveSource):
    """A validated bank of recorded loss curves; ``sample`` replays a uniformly drawn row.

    Args:
        losses: [N, L] losses, NaN-padded at the end of shorter rows.
        family: [N] family name of each row.
        config: [N] JSON text of each row's hyperparameters (default "{}").
        split: [N] optional split label of each row.
        name: a label used in messages and results.
    """

    validated = True  # every row was checked when the bank was built

    def __init__(
        self,
        losses: np.ndarray,
        family: Sequence[str],
        config: Sequence[str] | None = None,
        split: Sequence[str] | None = None,
        name: str = "bank",
    ) -> None:
        losses = np.asarray(losses)
        n = _check_shape(losses, name)
        family = _check_labels(family, "family", n, name)
        config = _check_labels(["{}"] * n if config is None else config, "config", n, name)
        for i, text in enumerate(config):
            try:
                json.loads(text)
            except json.JSONDecodeError as e:
                raise BankError(f"bank {name!r}: config[{i}] is not JSON text: {text!r}.") from e
        _check_curves(losses, name, lambda i: f"curve {i} (family {str(family[i])!r}, {config[i]})")
        self.split = None if split is None else _check_labels(split, "split", n, name)
        self.losses = losses.astype(np.float64)
        self.losses.flags.writeable = False
        self.lengths = np.sum(~np.isnan(self.losses), axis=1)
        self.family = family
        self.config = config
        self.name = name

    def __len__(self) -> int:
        return len(self.family)

    def __repr__(self) -> str:
        return f"CurveBank({self.name!r}, runs={len(self)}, families={len(self.families)})"

    @property
    def families(self) -> tuple[str, ...]:
        """Family names in order of first appearance."""
        return tuple(dict.fromkeys(self.family.tolist()))

    def description(self, row: int) -> Description:
        """What run ``row`` is: its family and config fields (`coreenv.context.describe`)."""
        cache = self.__dict__.setdefault("_descriptions", {})
        if row not in cache:
            cache[row] = describe(str(self.family[row]), str(self.config[row]))
        return cache[row]

    def describe(self, curve: Curve) -> Description:
        """The `description` of the run ``curve`` replays (by its ``curve_id``)."""
        if 0 <= curve.curve_id < len(self):
            return self.description(curve.curve_id)
        return super().describe(curve)

    def curve(self, index: int) -> Curve:
        """Row ``index`` as a `Curve` (a read-only view, no copy)."""
        return Curve(self.losses[index, : self.lengths[index]], str(self.family[index]), index)

    def sample(self, rng: np.random.Generator) -> Curve:
        """Replay a uniformly drawn recorded run."""
        return self.curve(int(rng.integers(len(self))))

    def subset(self, rows: np.ndarray | Sequence[int], name: str | None = None) -> CurveBank:
        """A bank of the given rows (indices or a boolean mask), e.g. one family or one split."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        if rows.size == 0:
            raise BankError(f"bank {self.name!r}: the requested subset is empty.")
        split = None if self.split is None else self.split[rows]
        return CurveBank(
            self.losses[rows], self.family[rows], self.config[rows], split, name or self.name
        )


def load_bank(path: str | os.PathLike) -> CurveBank:
    """Load and validate a bank `.npz`; raise `BankError` naming what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise BankError(f"no curve bank at {str(path)!r}.")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:  # numpy's text advises pickle
        raise BankError(_NOT_A_BANK.format(path=str(path))) from e
    if not isinstance(data, NpzFile):  # a lone .npy array
        raise BankError(_NOT_A_BANK.format(path=str(path)))
    with data:
        arrays = {key: data[key] for key in data.files}
    missing = [key for key in REQUIRED_KEYS if key not in arrays]
    if missing:
        raise BankError(
            f"curve bank {str(path)!r} lacks key(s) {missing}; a bank needs {list(REQUIRED_KEYS)}."
        )
    return CurveBank(
        arrays["losses"], arrays["family"], arrays["config"], arrays.get("split"), path.stem
    )


def save_bank(bank: CurveBank, path: str | os.PathLike, dtype: type = np.float32) -> None:
    """Write ``bank`` as a compressed `.npz` (``dtype`` float32 or float16 keeps it small)."""
    arrays = {
        "losses": bank.losses.astype(dtype),
        "family": bank.family.astype(str),
        "config": bank.config.astype(str),
    }
    if bank.split is not None:
        arrays["split"] = bank.split.astype(str)
    np.savez_compressed(path, **arrays)
    load_bank(path)  # a lossy dtype must not have made a curve invalid


NOT_A_CURVE = "not a 1-D curve of at least 2 losses"
NOT_POSITIVE = "non-finite or non-positive loss"
NEVER_FALLS = "never falls below its initial loss"


@dataclass(frozen=True)
class CurveProblem:
    """Why a curve cannot host a task.

    Attributes:
        rule: the rule it breaks: `NOT_A_CURVE`, `NOT_POSITIVE` or `NEVER_FALLS` (short and
            stable: the curve bank's manifest records it for every run left out).
        message: the rule with the offending value and where it is, to follow the curve's name
            ("curve 3 (family 'mlp', {...}) has a non-finite ...").
    """

    rule: str
    message: str


def curve_problem(losses: np.ndarray) -> CurveProblem | None:
    """Why ``losses`` (one curve, unpadded: ``losses[n]`` after n batches) cannot host a task.

    The one statement of what a usable curve is: at least 2 losses, every one finite and > 0, and
    some loss below the initial one (else no target is reachable). Banks check every row with it,
    the environment every curve of an unvalidated source, the bank recorder every recorded run.
    Returns None for a usable curve.
    """
    losses = np.asarray(losses)
    if losses.ndim != 1 or len(losses) < 2:
        return CurveProblem(
            NOT_A_CURVE, f"has shape {losses.shape}; needs 1-D with at least 2 losses"
        )
    bad = ~np.isfinite(losses) | (losses <= 0)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        return CurveProblem(
            NOT_POSITIVE,
            f"has a {NOT_POSITIVE} {float(losses[j])!r} at batch {j}; "
            "losses must be finite and > 0",
        )
    if not np.any(losses[1:] < losses[0]):
        return CurveProblem(
            NEVER_FALLS,
            f"{NEVER_FALLS} {float(losses[0])!r}, so no reachable target exists",
        )
    return None


def concat_banks(banks: Sequence[CurveBank], name: str) -> CurveBank:
    """One bank of every row of ``banks`` in order, padded to the longest; each row equally likely.

    Split labels are kept when every bank has them.
    """
    if not banks:
        raise BankError(f"bank {name!r}: no banks to join.")
    losses = np.full((sum(len(b) for b in banks), max(b.losses.shape[1] for b in banks)), np.nan)
    start = 0
    for bank in banks:
        losses[start : start + len(bank), : bank.losses.shape[1]] = bank.losses
        start += len(bank)
    splits = [b.split for b in banks]
    split = None if any(s is None for s in splits) else np.concatenate(splits)
    family = np.concatenate([b.family for b in banks])
    return CurveBank(losses, family, np.concatenate([b.config for b in banks]), split, name)


def pad_curves(curves: Sequence[np.ndarray]) -> np.ndarray:
    """Curves of any lengths as the bank's [N, L] float64 ``losses``, NaN-padded at the end.

    L is the longest curve's length; no curves give a (0, 0) matrix (which a bank refuses).
    """
    rows = [np.asarray(curve, np.float64) for curve in curves]
    for i, row in enumerate(rows):
        if row.ndim != 1:
            raise BankError(f"curve {i} must be 1-D to be padded into a bank, got {row.shape}.")
    losses = np.full((len(rows), max((len(row) for row in rows), default=0)), np.nan)
    for i, row in enumerate(rows):
        losses[i, : len(row)] = row
    return losses


def _check_shape(losses: np.ndarray, name: str) -> int:
    if losses.ndim != 2:
        raise BankError(f"bank {name!r}: losses must be 2-D [N, L], got shape {losses.shape}.")
    if not np.issubdtype(losses.dtype, np.floating):
        raise BankError(f"bank {name!r}: losses must be floats, got dtype {losses.dtype}.")
    if losses.shape[0] == 0:
        raise BankError(f"bank {name!r}: losses has no rows.")
    return losses.shape[0]


def _check_curves(losses: np.ndarray, name: str, run: Callable[[int], str]) -> None:
    """Every row is a NaN-padded usable curve; a bad one is named by ``run(i)`` (family, config)."""
    values = losses.astype(np.float64)
    present = ~np.isnan(values)
    lengths = present.sum(axis=1)
    for i in np.flatnonzero(lengths < 2):
        raise BankError(f"bank {name!r}: {run(i)} is empty (needs at least 2 losses).")
    gaps = present[:, 1:] & ~present[:, :-1]  # a value after a NaN: padding in the middle
    for i in np.flatnonzero(gaps.any(axis=1)):
        raise BankError(f"bank {name!r}: {run(i)} has NaN before its end (pad only at the end).")
    for i, length in enumerate(lengths):
        problem = curve_problem(values[i, :length])
        if problem is not None:
            raise BankError(f"bank {name!r}: {run(i)} {problem.message}.")


def _check_labels(labels: Sequence[str], key: str, n: int, name: str) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.ndim != 1 or len(labels) != n:
        raise BankError(
            f"bank {name!r}: {key} must have shape [{n}] like losses, got {labels.shape}."
        )
    if labels.dtype.kind not in "US":
        raise BankError(f"bank {name!r}: {key} must hold strings, got dtype {labels.dtype}.")
    return labels.astype(str)
