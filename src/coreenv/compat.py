"""The names of release 0.1.0 that coreenv keeps only for compatibility, until 0.4.0.

- 0.1.0's per-episode scheduler inputs `SlotTable`, `OracleView` and `TaskTruth`:
  `CoreEnv.slot_table()` and `CoreEnv.oracle_view()` warn and return them; `CoreEnv.view()` (a
  `SchedulerView`, the truth in ``view(clairvoyant=True)``) replaces both.
- `State` and `Counters`: the names a `CoreEnv` pickled by 0.1.0 refers to; such an environment is
  rebuilt from its config (`CoreEnv.__setstate__`). `install` (called by ``import coreenv``) puts
  back the module paths of 0.1.0 that its pickles name: ``coreenv.core.env`` (`CoreEnv`),
  ``coreenv.core.state`` (`State`, `Counters`), ``coreenv.core.scenarios`` (`BernoulliArrivals`)
  and ``coreenv.core.views.SlotTable``.
"""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from coreenv.core import engine as e
from coreenv.errors import NoPredictorError

if TYPE_CHECKING:
    from coreenv.core.lanes import Lanes

__all__ = ["PICKLED_PATHS", "Counters", "OracleView", "SlotTable", "State", "TaskTruth", "install"]


class SlotTable:
    """Deprecated, removed in 0.4.0 (read `CoreEnv.view`): one episode's public slot data.

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
    """Deprecated, removed in 0.4.0 (read ``CoreEnv.view(clairvoyant=True)``): one task's truth."""

    uid: int
    demand: int | None  # R*, None if unknowable (live curves)
    remaining: int | None  # R* - n_k
    arrival: int
    deadline: int
    target: float
    curve: np.ndarray  # the whole loss curve (for live curves: the losses trained so far)


@dataclass(frozen=True)
class OracleView:
    """Deprecated, removed in 0.4.0 (read ``CoreEnv.view(clairvoyant=True)``): the slots' truth.

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
    """Kept until 0.4.0: what a 0.1.0 pickle's episode state loads as (nothing of it is kept)."""

    def __setstate__(self, state: dict) -> None:
        """Drop the pickled state."""


Counters = State
"""Kept until 0.4.0: what a 0.1.0 pickle's episode counters load as (as `State`)."""


PICKLED_PATHS = {
    "coreenv.core.env": {"CoreEnv": "coreenv.shells.parallel"},
    "coreenv.core.state": {"State": __name__, "Counters": __name__},
    "coreenv.core.scenarios": {"BernoulliArrivals": "coreenv.episodes.scenarios"},
}
"""The module paths of 0.1.0 that its pickles name: each name and the module that holds it now
(named as text, so that this module imports nothing above the simulator)."""


def install() -> None:
    """Make the module paths a 0.1.0 pickle names resolve to today's classes (idempotent)."""
    for name, names in PICKLED_PATHS.items():
        if name not in sys.modules:
            module = types.ModuleType(name, "A module path of coreenv 0.1.0, for its pickles.")
            module.__getattr__ = _reader(name, names)
            sys.modules[name] = module
    importlib.import_module("coreenv.core.views").SlotTable = SlotTable


def _reader(path: str, names: dict[str, str]):
    """A module ``__getattr__`` serving ``names`` from the modules that hold them now."""

    def __getattr__(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {path!r} has no attribute {name!r}")
        return getattr(importlib.import_module(names[name]), name)

    return __getattr__
