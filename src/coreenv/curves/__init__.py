"""Curve sources behind one interface: generated (`synthetic`) and recorded (`CurveBank`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coreenv.curves.bank import CurveBank, load_bank, save_bank
from coreenv.curves.bundled import NAMED_SPLITS, bundled_bank, named_task_set
from coreenv.curves.csv_logs import bank_from_arrays, bank_from_csv, bank_to_csv
from coreenv.curves.source import Curve, CurveSource
from coreenv.curves.synthetic import SyntheticCurves
from coreenv.errors import ConfigError

__all__ = [
    "TASK_SETS",
    "Curve",
    "bank_from_arrays",
    "bank_from_csv",
    "bank_to_csv",
    "bundled_bank",
    "CurveBank",
    "CurveSource",
    "SyntheticCurves",
    "load_bank",
    "named_task_set",
    "resolve_task_set",
    "save_bank",
]


def _live() -> CurveSource:
    """Tasks that really train (the agents extra: torch and scikit-learn)."""
    try:
        from mara_agents.curvegen.live import LiveCurves
    except ImportError as e:
        raise ConfigError(
            "EnvConfig.task_set 'live' trains real torch models and needs the agents extra: "
            f"pip install 'coreenv[agents]' ({e})."
        ) from e
    return LiveCurves()


TASK_SETS: dict[str, Callable[[], CurveSource]] = {
    "synthetic": SyntheticCurves,
    **{name: functools.partial(named_task_set, name) for name in NAMED_SPLITS},
    "live": _live,
}
"""Named task sets accepted by `EnvConfig.task_set`, each a factory of its source."""


def resolve_task_set(task_set: Any) -> CurveSource:
    """Turn an `EnvConfig.task_set` value (name, path, bank or source) into a `CurveSource`."""
    if isinstance(task_set, CurveSource):
        return task_set
    if isinstance(task_set, os.PathLike) or (
        isinstance(task_set, str) and (task_set.endswith(".npz") or os.sep in task_set)
    ):
        return _load_cached(str(Path(task_set).resolve()))
    if isinstance(task_set, str) and task_set in TASK_SETS:
        return TASK_SETS[task_set]()
    if isinstance(task_set, str) and task_set.lower().endswith(".csv"):
        raise ConfigError(
            f"EnvConfig.task_set {task_set!r} is a CSV of training logs, not a bank: convert it "
            "once with coreenv.curves.bank_from_csv(path) and save_bank(bank, 'mine.npz'), then "
            "pass 'mine.npz' (docs/curves.md, 'Bring your own curves')."
        )
    raise ConfigError(
        f"EnvConfig.task_set {task_set!r} is not a known task set {sorted(TASK_SETS)}, "
        "a path to a bank .npz, a CurveBank or a CurveSource."
    )


@functools.lru_cache(maxsize=8)
def _load_cached(path: str) -> CurveBank:
    """Banks are read-only, so many environments can share one loaded copy."""
    return load_bank(path)
