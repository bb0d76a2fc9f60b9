"""`Memory`: what a cluster that remembers knows of its lanes' tasks (`EnvConfig.information`).

Past ``information="prefix"`` each task says what it is (its `Description`); at ``"history"``
each lane also remembers the tasks its episode has finished, after those it started with
(`EnvConfig.warm_history`). Predictors that read context get both (`TaskContext`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from coreenv.context import Description, FinishedTask, TaskContext
from coreenv.core import engine as e

if TYPE_CHECKING:
    from coreenv.episodes.drawer import EpisodeTasks

__all__ = ["Memory", "TaskTables"]


class TaskTables(Protocol):
    """What `Memory` reads of the lanes it remembers for (`coreenv.core.lanes.Lanes` holds it)."""

    num_lanes: int
    num_slots: int
    slot_ints: np.ndarray
    task_ints: np.ndarray
    records: np.ndarray
    curves: Any


class Memory:
    """Each lane's task descriptions and finished tasks, read from `Lanes`' task tables.

    Attributes:
        descriptions: ``descriptions[lane][i]`` is task i's `Description`; None per lane at
            ``information="prefix"``.
        warm: ``warm[lane]``, the finished tasks the lane's episode started with.
        remembers: whether lanes remember their finished tasks (``information="history"``).
    """

    def __init__(self, lanes: TaskTables, remembers: bool) -> None:
        self.lanes, self.remembers = lanes, remembers
        b = lanes.num_lanes
        self.descriptions: list[Sequence[Description] | None] = [None] * b
        self.warm: list[tuple[FinishedTask, ...]] = [()] * b
        self._histories: list[tuple[FinishedTask, ...]] = [()] * b  # each lane's, as last made

    def start(self, lane: int, episode: EpisodeTasks | None) -> None:
        """``lane`` starts ``episode`` (None: it stops), remembering nothing of the last one."""
        self.descriptions[lane] = None if episode is None else episode.descriptions
        self.warm[lane] = () if episode is None else episode.warm
        self._histories[lane] = ()

    def contexts(self, flat: np.ndarray) -> list[TaskContext]:
        """The `TaskContext` of the task in each of the flat slots ``flat``."""
        k, ints = self.lanes.num_slots, self.lanes.slot_ints
        histories: dict[int, tuple[FinishedTask, ...]] = {}
        contexts = []
        for j in flat.tolist():
            b, task = j // k, int(ints[e.INDEX, j])
            if b not in histories:
                histories[b] = self.history(b)
            described = self.descriptions[b]
            description = Description() if described is None else described[task]
            contexts.append(TaskContext(description, histories[b]))
        return contexts

    def history(self, lane: int) -> tuple[FinishedTask, ...]:
        """The tasks ``lane``'s episode has finished, in the order they left (then arrival).

        After the tasks it started with (`EnvConfig.warm_history`); empty below
        ``information="history"``.
        """
        described = self.descriptions[lane]
        if described is None or not self.remembers:
            return ()
        ints = self.lanes.task_ints[:, lane]
        done = np.flatnonzero(ints[e.TASK_OUTCOME] != e.PENDING)
        if len(self._histories[lane]) == len(self.warm[lane]) + done.size:
            return self._histories[lane]  # tasks only ever finish: no new one, the same history
        done = done[np.argsort(ints[e.TASK_ENDED, done], kind="stable")]
        targets = self.lanes.records[lane, :, e.RECORD_INTS + e.TARGET]
        curves = self.lanes.curves[lane]
        self._histories[lane] = self.warm[lane] + tuple(
            FinishedTask(
                description=described[i],
                losses=np.asarray(curves[i][: ints[e.TASK_TRAINED, i] + 1]),
                target=float(targets[i]),
                completed=bool(ints[e.TASK_OUTCOME, i] == e.COMPLETED),
                arrival=int(ints[e.TASK_ARRIVAL, i]),
                deadline=int(ints[e.TASK_DEADLINE, i]),
                ended=int(ints[e.TASK_ENDED, i]),
            )
            for i in done.tolist()
        )
        return self._histories[lane]
