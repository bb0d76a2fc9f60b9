"""Views of the state for schedulers: what anyone may read, and the hidden truth for the oracle.

`SchedulerView` is the one input of schedulers: both engines give it (`CoreEnv.view` for one
episode, `BatchedCore.view` for all lanes), as arrays with a leading episode axis.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence

import numpy as np

from coreenv.config import EnvConfig
from coreenv.context import Description, FinishedTask, TaskContext
from coreenv.errors import NoPredictorError

__all__ = ["SchedulerView", "new_episode_id"]

_EPISODE_IDS = itertools.count()


def new_episode_id() -> int:
    """A number no other episode of this process has: what `SchedulerView.episode` holds."""
    return next(_EPISODE_IDS)


@dataclasses.dataclass(frozen=True, eq=False)
class SchedulerView:
    """What a scheduler may read of E episodes at once: the observation and the slots' data.

    Every array has a leading episode axis; slot arrays are (E, K). An empty slot reads
    ``occupied`` False, ``uid`` -1, ``deadline`` 2**62, ``batches`` 0 and ``target`` 0.5. All of it
    is observable by a real scheduler except ``remaining``, the hidden truth, which only a
    clairvoyant view holds (engines make one when asked: the oracle's).

    Attributes:
        configs: each episode's `EnvConfig` (E of them; episodes of one view share the node and
            slot counts, and may differ in anything else, e.g. the load).
        obs: (E, M, D) float32, each node's ``"observation"`` array.
        action_mask: (E, K + 1) int8, the mask every node of an episode shares.
        t: (E,) int64, the current step.
        waiting: (E,) int64, tasks waiting for a free slot.
        occupied: (E, K) bool, whether the slot holds a task.
        uid: (E, K) int64, the task's number in its episode (arrival order), -1 if empty.
        arrival, deadline: (E, K) int64, b_k and d_k.
        batches: (E, K) int64, n_k, batches trained.
        target: (E, K) float64, epsilon_k.
        estimates: (E, K, 2) float64, the attached predictor's remaining batches and P(success)
            (0 until ready); None without a predictor. Read them as `est_remaining` and
            `est_p_success`, which say so when there is no predictor.
        episode: (E,) int64, a number unique to each episode in this process (a scheduler keys
            what it remembers of an episode by it).
        seed: (E,) int64, the seed each episode was reset with (-1 for a reset without one,
            which continues the generator).
        remaining: (E, K) int64 true remaining batches R* - n_k of each occupied slot (-1 if
            unknowable, 0 if empty), only in a clairvoyant view; else None.
        last_node: (E, K) int64, the node that last trained the slot's task, -1 if none has.
        resume_cost: (E, K) int64, the steps the task would lose trained on ``last_node`` at the
            next step (`EnvConfig.switch_cost` after a pause, what is left of a restore, 0 if it
            trained at the last step); on any other node it loses ``switch_cost``, unless it
            never trained (0).
    """

    configs: tuple[EnvConfig, ...]
    obs: np.ndarray
    action_mask: np.ndarray
    t: np.ndarray
    waiting: np.ndarray
    occupied: np.ndarray
    uid: np.ndarray
    arrival: np.ndarray
    deadline: np.ndarray
    batches: np.ndarray
    target: np.ndarray
    estimates: np.ndarray | None
    episode: np.ndarray
    seed: np.ndarray
    curves: Sequence[Sequence[np.ndarray] | Mapping[int, np.ndarray]]
    """``curves[e][uid]``: the whole loss curve of episode e's task ``uid`` (at least those in the
    slots); read through `prefix`, which shows only what training revealed."""
    remaining: np.ndarray | None = None
    last_node: np.ndarray | None = None
    resume_cost: np.ndarray | None = None
    descriptions: Sequence[Sequence[Description] | None] = ()
    """``descriptions[e][uid]``: what episode e's task ``uid`` is, where its config's
    ``information`` is not ``"prefix"`` (else None, or no entry); read through `description`."""
    histories: Sequence[Sequence[FinishedTask]] = ()
    """``histories[e]``: the tasks episode e has finished, in the order they left, where its
    config's ``information`` is ``"history"`` (else empty, or no entry)."""

    def take(self, episodes: np.ndarray) -> SchedulerView:
        """The view of ``episodes`` (indices or a bool mask over E) alone."""
        index = np.arange(self.num_episodes)[episodes]
        picked = {
            f.name: value[index] if isinstance(value, np.ndarray) else value
            for f in dataclasses.fields(self)
            if (value := getattr(self, f.name)) is not None
        }
        picked["curves"] = [self.curves[e] for e in index.tolist()]
        for name in ("descriptions", "histories"):
            values = getattr(self, name)
            picked[name] = [values[e] for e in index.tolist()] if values else ()
        picked["configs"] = tuple(self.configs[e] for e in index.tolist())
        return dataclasses.replace(self, **picked)

    @classmethod
    def concat(cls, views: Sequence[SchedulerView]) -> SchedulerView:
        """One view of the episodes of ``views``, in order (they must share a layout)."""
        if not views:
            raise ValueError("SchedulerView.concat needs at least one view to join.")
        first = views[0]
        if len(views) == 1:
            return first
        layouts = {(v.obs.shape[1:], v.action_mask.shape[1]) for v in views}
        if len(layouts) > 1:
            raise ValueError(f"views of several observation layouts cannot be joined: {layouts}.")
        joined = {}
        for f in dataclasses.fields(cls):
            values = [getattr(v, f.name) for v in views]
            if f.name in ("configs", "curves"):
                joined[f.name] = tuple(item for value in values for item in value)
            elif f.name in ("descriptions", "histories"):
                empty = (None,) if f.name == "descriptions" else ((),)
                joined[f.name] = tuple(
                    item
                    for v, value in zip(views, values)
                    for item in (value or empty * v.num_episodes)
                )
            elif any(value is None for value in values):
                joined[f.name] = None  # estimates or truth that not every episode has
            else:
                joined[f.name] = np.concatenate(values)
        return cls(**joined)

    @property
    def num_nodes(self) -> int:
        """M, the nodes of every episode."""
        return self.obs.shape[1]

    @property
    def num_slots(self) -> int:
        """K, the slots of every episode."""
        return self.action_mask.shape[1] - 1

    @property
    def batches_per_step(self) -> np.ndarray:
        """(E,) int64, each episode's batches a node trains per step."""
        return np.array([config.batches_per_step for config in self.configs], np.int64)

    @property
    def speeds(self) -> np.ndarray:
        """(E, M) int64, each episode's node speeds (`EnvConfig.speeds`)."""
        return np.array([config.speeds for config in self.configs], np.int64)

    @property
    def switch_cost(self) -> np.ndarray:
        """(E,) int64, each episode's `EnvConfig.switch_cost`."""
        return np.array([config.switch_cost for config in self.configs], np.int64)

    @property
    def num_episodes(self) -> int:
        """E."""
        return len(self.t)

    @property
    def est_remaining(self) -> np.ndarray:
        """(E, K) float64, the predictor's remaining batches (0 until ready).

        Raises `NoPredictorError` without a predictor: there are no estimates to read.
        """
        return self._estimates()[..., 0]

    @property
    def est_p_success(self) -> np.ndarray:
        """(E, K) float64, the predictor's P(success) (0 until ready); see `est_remaining`."""
        return self._estimates()[..., 1]

    def _estimates(self) -> np.ndarray:
        if self.estimates is None:
            raise NoPredictorError.reading("these episodes (or some of them, in a joined view)")
        return self.estimates

    def prefix(self, episode: int, slot: int) -> np.ndarray:
        """The losses revealed so far for the task in ``slot`` of ``episode`` (``L[0..n_k]``)."""
        if not self.occupied[episode, slot]:
            raise ValueError(f"slot {slot} of episode {episode} is empty.")
        return self.curves[episode][self.uid[episode, slot]][: self.batches[episode, slot] + 1]

    def prefixes(self, episodes: np.ndarray, slots: np.ndarray) -> list[np.ndarray]:
        """`prefix` of each ``(episodes[i], slots[i])``."""
        return [self.prefix(e, j) for e, j in zip(episodes.tolist(), slots.tolist())]

    def description(self, episode: int, slot: int) -> Description:
        """What the task in ``slot`` of ``episode`` is; empty where its config does not say."""
        if not self.occupied[episode, slot]:
            raise ValueError(f"slot {slot} of episode {episode} is empty.")
        described = self.descriptions[episode] if self.descriptions else None
        return Description() if described is None else described[self.uid[episode, slot]]

    def contexts(self, episodes: np.ndarray, slots: np.ndarray) -> list[TaskContext]:
        """The `TaskContext` of each ``(episodes[i], slots[i])`` task.

        What a predictor that `coreenv.context.reads_context` is told: the description and the
        history, as far as the episode's ``information`` shows them.
        """
        return [
            TaskContext(self.description(e, j), self.histories[e] if self.histories else ())
            for e, j in zip(episodes.tolist(), slots.tolist())
        ]

    def budgets(self, episodes: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """A predictor's budget for each ``(episodes[i], slots[i])`` task: the batches the
        fastest node trains by its deadline, ``fastest_batches · (d_k − t)``."""
        time_left = self.deadline[episodes, slots] - self.t[episodes]
        fastest = np.array([config.fastest_batches for config in self.configs], np.int64)
        return fastest[episodes] * time_left

    def per_episode(self, rows: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
        """``rows`` of the (E, K) ``mask``'s true cells in row-major order, split by episode."""
        return np.split(rows, np.cumsum(mask.sum(axis=1))[:-1]) if self.num_episodes else []
