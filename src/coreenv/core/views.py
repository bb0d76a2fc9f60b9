"""Views of the state for schedulers: what anyone may read, and the hidden truth for the oracle."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coreenv.core.state import State
from coreenv.core.tasks import Task
from coreenv.errors import NoPredictorError

__all__ = ["OracleView", "SlotTable", "TaskTruth"]


class SlotTable:
    """The public slot information, (K,) arrays, for hand-written schedulers.

    Everything here is observable by a real scheduler: arrival, deadline, batches trained, the
    losses revealed so far and the attached predictor's estimates; the true demand is not. The
    attributes set when a task enters a slot are live read-only views (they follow the env); the
    properties are fresh arrays. ``version`` changes whenever a task enters or leaves a slot, so a
    scheduler whose choice depends only on which tasks are present can reuse it until then.
    """

    def __init__(self, state: State) -> None:
        self._state = state
        self.occupied = _read_only(state.occupied)  # whether the slot holds a task
        self.uid = _read_only(state.uid)  # task id (increasing with arrival), -1 if empty
        self.arrival = _read_only(state.arrival)  # b_k
        self.deadline = _read_only(state.deadline)  # d_k (2**62 if empty)
        self.initial_loss = _read_only(state.loss0)  # L_k[0]
        self.target = _read_only(state.target)  # epsilon_k

    @property
    def t(self) -> int:
        """The current step."""
        return self._state.t

    @property
    def version(self) -> int:
        """Changes whenever a task enters or leaves a slot."""
        return self._state.version

    @property
    def batches(self) -> np.ndarray:
        """(K,) int64 n_k, batches trained."""
        return np.array(self._state.cursor, np.int64)

    @property
    def loss(self) -> np.ndarray:
        """(K,) float64 L_k[n_k], the last revealed loss."""
        return np.array(self._state.loss)

    @property
    def est_remaining(self) -> np.ndarray:
        """(K,) float64, the predictor's remaining batches (0 until ready).

        Raises `NoPredictorError` when no predictor is attached: there are no estimates to read.
        """
        self._require_predictor()
        return np.array(self._state.est_remaining)

    @property
    def est_p_success(self) -> np.ndarray:
        """(K,) float64, the predictor's P(success) (0 until ready); see `est_remaining`."""
        self._require_predictor()
        return np.array(self._state.est_p_success)

    def _require_predictor(self) -> None:
        if not self._state.has_predictor:
            raise NoPredictorError(
                "this environment has no predictor attached, so it makes no estimates: create it "
                "with CoreEnv(predictor=...), or declare observation_predictor on your scheduler "
                "so that evaluate() and the sweep attach one (docs/schedulers.md)."
            )

    def prefix(self, slot: int) -> np.ndarray:
        """The losses revealed so far for the task in ``slot`` (``L[0..n_k]``)."""
        task = self._state.tasks[slot]
        if task is None:
            raise ValueError(f"slot {slot} is empty.")
        return task.curve.losses[: self._state.cursor[slot] + 1]


@dataclass(frozen=True)
class TaskTruth:
    """The hidden truth about one task (tests and the clairvoyant oracle only)."""

    uid: int
    demand: int | None  # R*, None if unknowable (live curves)
    remaining: int | None  # R* - n_k
    arrival: int
    deadline: int
    target: float
    curve: np.ndarray  # the whole loss curve (for live curves: the losses trained so far)


@dataclass(frozen=True)
class OracleView:
    """Truth for every slot (None where empty) and for the waiting tasks, in queue order."""

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
    return TaskTruth(
        task.uid,
        task.demand,
        None if task.demand is None else task.demand - cursor,
        task.arrival,
        task.deadline,
        task.target,
        task.curve.losses,
    )


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view
