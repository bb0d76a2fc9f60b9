"""0.1.0's per-episode scheduler inputs, kept through 0.2.0 and removed in 0.3.0.

`CoreEnv.slot_table()` and `CoreEnv.oracle_view()` warn and return these; `CoreEnv.view()` (a
`SchedulerView`, the truth in ``view(clairvoyant=True)``) replaces both. Deleting this module
and those two methods is the whole removal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coreenv.core.state import State
from coreenv.core.tasks import Task
from coreenv.errors import NoPredictorError

__all__ = ["OracleView", "SlotTable", "TaskTruth"]


class SlotTable:
    """Deprecated (removed in 0.3.0): the public slot information of one episode, (K,) arrays.

    ``occupied``, ``uid``, ``arrival``, ``deadline``, ``initial_loss`` and ``target`` are live
    read-only views (they follow the env); the others are fresh arrays or values.
    """

    def __init__(self, state: State) -> None:
        self._state = state

    occupied = property(lambda self: self._live(self._state.occupied))
    uid = property(lambda self: self._live(self._state.uid))
    arrival = property(lambda self: self._live(self._state.arrival))
    deadline = property(lambda self: self._live(self._state.deadline))
    initial_loss = property(lambda self: self._live(self._state.loss0))
    target = property(lambda self: self._live(self._state.target))
    t = property(lambda self: self._state.t)
    version = property(lambda self: self._state.version)
    batches = property(lambda self: np.array(self._state.cursor, np.int64))
    loss = property(lambda self: np.array(self._state.loss))

    @property
    def est_remaining(self) -> np.ndarray:
        """(K,) the predictor's remaining batches; `NoPredictorError` without a predictor."""
        self._require_predictor()
        return np.array(self._state.est_remaining)

    @property
    def est_p_success(self) -> np.ndarray:
        """(K,) the predictor's P(success); `NoPredictorError` without a predictor."""
        self._require_predictor()
        return np.array(self._state.est_p_success)

    def prefix(self, slot: int) -> np.ndarray:
        """The losses revealed so far for the task in ``slot`` (``L[0..n_k]``)."""
        task = self._state.tasks[slot]
        if task is None:
            raise ValueError(f"slot {slot} is empty.")
        return task.curve.losses[: self._state.cursor[slot] + 1]

    def _require_predictor(self) -> None:
        if not self._state.has_predictor:
            raise NoPredictorError.reading("this environment")

    @staticmethod
    def _live(array: np.ndarray) -> np.ndarray:
        view = array.view()
        view.flags.writeable = False
        return view


@dataclass(frozen=True)
class TaskTruth:
    """Deprecated (removed in 0.3.0): the hidden truth about one task."""

    uid: int
    demand: int | None  # R*, None if unknowable (live curves)
    remaining: int | None  # R* - n_k
    arrival: int
    deadline: int
    target: float
    curve: np.ndarray  # the whole loss curve (for live curves: the losses trained so far)


@dataclass(frozen=True)
class OracleView:
    """Deprecated (removed in 0.3.0): the truth of the slots and of the waiting tasks.

    ``slots[j]`` is None where slot j is empty; ``waiting`` is in queue order.
    """

    t: int
    slots: list[TaskTruth | None]
    waiting: list[TaskTruth]

    @classmethod
    def of(cls, state: State) -> OracleView:
        """Snapshot the truth of ``state``."""
        slots = [
            None if task is None else _truth(task, state.cursor[j])
            for j, task in enumerate(state.tasks)
        ]
        return cls(state.t, slots, [_truth(task, 0) for task in state.waiting])


def _truth(task: Task, cursor: int) -> TaskTruth:
    remaining = None if task.demand is None else task.demand - cursor
    return TaskTruth(
        task.uid,
        task.demand,
        remaining,
        task.arrival,
        task.deadline,
        task.target,
        task.curve.losses,
    )
