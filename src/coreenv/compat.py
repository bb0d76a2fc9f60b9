"""Every name and module path coreenv keeps only for compatibility, each with its removal version.

- 0.1.0's per-episode scheduler inputs `SlotTable`, `OracleView` and `TaskTruth` (removed in
  0.3.0): `CoreEnv.slot_table()` and `CoreEnv.oracle_view()` warn and return them;
  `CoreEnv.view()` (a `SchedulerView`, the truth in ``view(clairvoyant=True)``) replaces both.
- `State` and `Counters` (removed in 0.4.0): the names a `CoreEnv` pickled by 0.1.0 refers to;
  such an environment is rebuilt from its config (`CoreEnv.__setstate__`).
- `MOVED_MODULES` (removed in 0.4.0): module paths of 0.2.0 whose content moved, so that
  ``import`` of the old path and pickles of 0.2.0 (which name their classes' modules) still work.
- `MOVED_NAMES`: names that left a module that still exists, each with its removal version
  (the observation-layout helpers left the top level for `coreenv.layout`).

`install` (called once by ``import coreenv``) registers the old paths: an alias module in
``sys.modules`` for each moved module, and a module ``__getattr__`` on each module that lost
names. Every old path warns (`DeprecationWarning`) naming the new one and the removal version.
The new places are named as strings and imported when an old path is first read, so that this
module imports nothing above the simulator and the shells may import it.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from coreenv.core import engine as e
from coreenv.core.lanes import Lanes
from coreenv.errors import NoPredictorError

__all__ = [
    "MOVED_MODULES",
    "MOVED_NAMES",
    "Counters",
    "OracleView",
    "SlotTable",
    "State",
    "TaskTruth",
    "install",
]

MOVED_MODULES: dict[str, tuple[tuple[str, ...], str]] = {
    "coreenv.core.env": (("coreenv.shells.parallel",), "0.4.0"),
    "coreenv.core.batched": (("coreenv.shells.batched",), "0.4.0"),
    "coreenv.gym_env": (("coreenv.shells.gym",), "0.4.0"),
    "coreenv.sequential_env": (("coreenv.shells.sequential", "coreenv.layout"), "0.4.0"),
    "coreenv.vector_env": (("coreenv.shells.vector",), "0.4.0"),
    "coreenv.core.legacy": (("coreenv.compat",), "0.3.0"),
    "coreenv.core.state": (("coreenv.compat",), "0.4.0"),
}
"""Old module path -> (the modules that now hold its names, the version that drops the path)."""

_LAYOUT = ("coreenv.layout", "0.3.0")
_SHELLS = {
    "CoreEnv": ("coreenv.shells.parallel", "0.4.0"),
    "BatchedCore": ("coreenv.shells.batched", "0.4.0"),
    "BatchedObservation": ("coreenv.shells.batched", "0.4.0"),
    "BatchedStep": ("coreenv.shells.batched", "0.4.0"),
}
_LEGACY = dict.fromkeys(("OracleView", "SlotTable", "TaskTruth"), ("coreenv.compat", "0.3.0"))

MOVED_NAMES: dict[str, dict[str, tuple[str, str]]] = {
    "coreenv": dict.fromkeys(
        (
            "GLOBAL_FEATURES",
            "OBS_BOUND",
            "SLOT_ORDERS",
            "listed_state",
            "live_mask",
            "slot_listing",
            "slot_tables",
            "slot_width",
            "table_start",
        ),
        _LAYOUT,
    ),
    "coreenv.core": {**_SHELLS, **_LEGACY},
    "coreenv.core.views": _LEGACY,
}
"""Module -> {name that left it: (the module that holds it now, the version that drops it)}."""


def install() -> None:
    """Register every old path of `MOVED_MODULES` and `MOVED_NAMES` (idempotent)."""
    for old, (new, version) in MOVED_MODULES.items():  # new: the modules that hold its names
        if old not in sys.modules:
            parent, _, child = old.rpartition(".")
            moved = f"Moved to {' and '.join(new)}; this path goes in coreenv {version}."
            alias = types.ModuleType(old, moved)
            alias.__getattr__ = _forwarder(
                old, lambda name, to=new, v=version: _holder(name, to, v)
            )
            sys.modules[old] = alias
            setattr(sys.modules[parent], child, alias)
    for module, names in MOVED_NAMES.items():
        importlib.import_module(module).__getattr__ = _forwarder(module, names.get)


def _holder(name: str, modules: tuple[str, ...], version: str) -> tuple[str, str] | None:
    """The first of ``modules`` that exports ``name`` (its ``__all__``), with ``version``."""
    for module in modules:
        if name in importlib.import_module(module).__all__:
            return module, version
    return None


def _forwarder(old: str, moved: Callable[[str], tuple[str, str] | None]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``old`` that reads moved names from their new modules.

    ``moved(name)`` is the name's new module and removal version (None: not moved). Reading one
    warns (`DeprecationWarning`).
    """

    def __getattr__(name: str) -> object:
        to = None if name.startswith("__") else moved(name)
        if to is None:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        new, version = to
        warnings.warn(
            f"{old}.{name} is deprecated and will be removed in coreenv {version}: "
            f"use {new}.{name}.",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new), name)

    return __getattr__


class SlotTable:
    """Deprecated, removed in 0.3.0 (read `CoreEnv.view`): one episode's public slot data.

    Its arrays are (K,). ``occupied``, ``uid``, ``arrival``, ``deadline``, ``initial_loss`` and
    ``target`` are live read-only views (they follow the env); the rest are fresh arrays or values.
    """

    def __init__(self, lanes: Lanes, has_predictor: bool) -> None:
        self._lanes, self._has_predictor = lanes, has_predictor

    occupied = property(lambda self: self._live(self._lanes.occupied[0]))
    uid = property(lambda self: self._live(self._lanes.slot_ints[e.INDEX]))
    arrival = property(lambda self: self._live(self._lanes.slot_ints[e.ARRIVAL]))
    deadline = property(lambda self: self._live(self._lanes.slot_ints[e.DEADLINE]))
    initial_loss = property(lambda self: self._live(self._lanes.slot_floats[e.INITIAL_LOSS]))
    target = property(lambda self: self._live(self._lanes.slot_floats[e.TARGET]))
    t = property(lambda self: int(self._lanes.lane[0, e.T]))
    version = property(lambda self: int(self._lanes.lane[0, e.VERSION]))
    batches = property(lambda self: self._lanes.slot_ints[e.CURSOR].copy())

    @property
    def loss(self) -> np.ndarray:
        """(K,) the last revealed loss of each slot's task (1 where empty)."""
        return np.array(
            [self.prefix(j)[-1] if on else 1.0 for j, on in enumerate(self.occupied.tolist())]
        )

    @property
    def est_remaining(self) -> np.ndarray:
        """(K,) the predictor's remaining batches; `NoPredictorError` without a predictor."""
        self._require_predictor()
        return self._lanes.slot_floats[e.EST_REMAINING].copy()

    @property
    def est_p_success(self) -> np.ndarray:
        """(K,) the predictor's P(success); `NoPredictorError` without a predictor."""
        self._require_predictor()
        return self._lanes.slot_floats[e.EST_P].copy()

    def prefix(self, slot: int) -> np.ndarray:
        """The losses revealed so far for the task in ``slot`` (``L[0..n_k]``)."""
        if not self._lanes.occupied[0, slot]:
            raise ValueError(f"slot {slot} is empty.")
        uid, cursor = self._lanes.slot_ints[[e.INDEX, e.CURSOR], slot].tolist()
        return self._lanes.curves[0][uid][: cursor + 1]

    def _require_predictor(self) -> None:
        if not self._has_predictor:
            raise NoPredictorError.reading("this environment")

    @staticmethod
    def _live(array: np.ndarray) -> np.ndarray:
        view = array.view()
        view.flags.writeable = False
        return view


@dataclass(frozen=True)
class TaskTruth:
    """Deprecated, removed in 0.3.0 (read ``CoreEnv.view(clairvoyant=True)``): one task's truth."""

    uid: int
    demand: int | None  # R*, None if unknowable (live curves)
    remaining: int | None  # R* - n_k
    arrival: int
    deadline: int
    target: float
    curve: np.ndarray  # the whole loss curve (for live curves: the losses trained so far)


@dataclass(frozen=True)
class OracleView:
    """Deprecated, removed in 0.3.0 (read ``CoreEnv.view(clairvoyant=True)``): the slots' truth.

    The truth of the slots and of the waiting tasks.
    ``slots[j]`` is None where slot j is empty; ``waiting`` is in queue order.
    """

    t: int
    slots: list[TaskTruth | None]
    waiting: list[TaskTruth]

    @classmethod
    def of(cls, lanes: Lanes) -> OracleView:
        """Snapshot the truth of one lane's episode (`CoreEnv`'s)."""
        ints = lanes.slot_ints
        slots = [
            _truth(lanes, int(ints[e.INDEX, j]), int(ints[e.CURSOR, j])) if on else None
            for j, on in enumerate(lanes.occupied[0].tolist())
        ]
        waiting = [_truth(lanes, i, 0) for i in lanes.waiting(0).tolist()]
        return cls(int(lanes.lane[0, e.T]), slots, waiting)


def _truth(lanes: Lanes, uid: int, cursor: int) -> TaskTruth:
    """The truth of task ``uid`` of the lane, ``cursor`` batches in."""
    record, tasks = lanes.records[0, uid], lanes.task_ints[:, 0, uid]
    demand = None if tasks[e.TASK_FEASIBLE] < 0 else int(record[0])  # its crossing
    return TaskTruth(
        uid,
        demand,
        None if demand is None else demand - cursor,
        int(tasks[e.TASK_ARRIVAL]),
        int(tasks[e.TASK_DEADLINE]),
        float(record[e.RECORD_INTS + e.TARGET]),
        lanes.curves[0][uid],
    )


class State:
    """Removed in 0.4.0: what a 0.1.0 pickle's episode state loads as (nothing of it is kept)."""

    def __setstate__(self, state: dict) -> None:
        """Drop the pickled state."""


Counters = State
"""Removed in 0.4.0: what a 0.1.0 pickle's episode counters load as (as `State`)."""
