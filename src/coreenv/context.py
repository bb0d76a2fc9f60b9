"""What a cluster that remembers knows of a task beyond its losses (design §2, information model).

With `EnvConfig.information` at ``"description"`` every task says what it is: its
`Description`, the fields of its run's config (family, optimizer, model size, ...; never the
run's seed or its position in a bank). At ``"history"`` the episode also keeps the tasks it has
finished: each `FinishedTask`'s revealed losses and outcome. A predictor that reads them says
so with ``reads_context = True`` and is then given one `TaskContext` per query (`estimate_many`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

__all__ = [
    "HIDDEN_FIELDS",
    "INFORMATION_MODELS",
    "Description",
    "FinishedTask",
    "TaskContext",
    "category_ids",
    "describe",
    "reads_context",
]

INFORMATION_MODELS = ("prefix", "description", "history")
"""What schedulers may read of a task (`EnvConfig.information`): its revealed losses alone; also
its description; also the tasks its episode has finished (each level includes the one before)."""

HIDDEN_FIELDS = frozenset({"seed", "index", "batches", "curve_id", "run", "split"})
"""Config fields a description never shows: they name a recorded run (or the bank split it is
in), not a kind of job."""


@dataclass(frozen=True)
class Description:
    """What a task is: its run's config fields, as a read-only mapping of name to value.

    ``kind(fields)`` is the tuple of some of them (None where one is missing); two tasks of
    the same kind are jobs a cluster would call alike.
    """

    fields: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", MappingProxyType(dict(self.fields)))

    def kind(self, names: Sequence[str]) -> tuple | None:
        """The values of ``names``, or None if the description lacks one of them."""
        if not all(name in self.fields for name in names):
            return None
        return tuple(self.fields[name] for name in names)

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, repr(v)) for k, v in self.fields.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Description) and dict(self.fields) == dict(other.fields)

    def __reduce__(self) -> tuple:
        """Pickled as its fields (a read-only mapping view itself does not pickle)."""
        return (Description, (dict(self.fields),))


def describe(family: str, config: str | Mapping[str, object] | None = None) -> Description:
    """The `Description` of a run of ``family`` with ``config`` (JSON text or a mapping).

    Every config field but `HIDDEN_FIELDS`, and ``family``.
    """
    values = json.loads(config) if isinstance(config, str) else dict(config or {})
    shown = {k: v for k, v in values.items() if k not in HIDDEN_FIELDS}
    shown["family"] = family
    return Description(shown)


@dataclass(frozen=True, eq=False)
class FinishedTask:
    """A task its episode has finished: what training revealed of it, and how it ended.

    Attributes:
        description: what the task was.
        losses: its revealed losses ``L[0..n]``, n the batches it trained (through its target's
            crossing when it completed).
        target: its target loss.
        completed: True if it reached the target in time, False if its deadline came first
            (in a slot or still waiting).
        arrival, deadline, ended: the steps it arrived, was due and left.
    """

    description: Description
    losses: np.ndarray
    target: float
    completed: bool
    arrival: int
    deadline: int
    ended: int


@dataclass(frozen=True, eq=False)
class TaskContext:
    """What a predictor reading context is told besides a task's prefix, target and budget.

    Attributes:
        description: the task's `Description` (empty at ``information="prefix"``).
        history: the tasks its episode finished before now, in the order they ended (empty
            below ``information="history"``).
    """

    description: Description
    history: Sequence[FinishedTask] = ()


def reads_context(predictor: object) -> bool:
    """Whether ``predictor`` asks for a `TaskContext` per query (``reads_context = True``)."""
    return bool(getattr(predictor, "reads_context", False))


def category_ids(descriptions: Sequence[Description], fields: Sequence[str]) -> np.ndarray:
    """(n, C) float64: each task's category id for each of ``fields``, numbered in arrival order.

    The first value of a field to arrive in the episode is 1, the next new one 2, ...; a task
    whose description lacks the field reads 0. An id depends only on the tasks arrived before
    it, and names a value only within its episode: two tasks of one kind read alike there,
    whatever the kind, seen in training or not.
    """
    ids = np.zeros((len(descriptions), len(fields)))
    for c, name in enumerate(fields):
        numbers: dict[object, int] = {}
        for i, description in enumerate(descriptions):
            if name in description.fields:
                value = repr(description.fields[name])
                ids[i, c] = numbers.setdefault(value, len(numbers) + 1)
    return ids
