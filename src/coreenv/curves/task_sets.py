"""Named task sets: the names `EnvConfig.task_set` accepts, each with the factory of a source.

Built in: ``synthetic`` and the named splits of the bundled bank. Code adds a name with
`register_task_set`; an installed package declares one in its metadata, in the entry-point group
`ENTRY_POINT_GROUP` (``name = "module:factory"``), which is imported only when that name is asked
for and no registered name matches. So coreenv never imports, nor names, the packages that extend
it: ``task_set="live"`` is declared by `curvegen` that way.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from coreenv.curves.bank import CurveBank, load_bank
from coreenv.curves.bundled import NAMED_SPLITS, named_task_set
from coreenv.curves.csv_logs import bank_from_csv
from coreenv.curves.source import CurveSource
from coreenv.curves.synthetic import SyntheticCurves
from coreenv.errors import ConfigError

__all__ = ["ENTRY_POINT_GROUP", "TASK_SETS", "TaskSets", "register_task_set", "resolve_task_set"]

ENTRY_POINT_GROUP = "coreenv.task_sets"

TaskSetFactory = Callable[[], CurveSource]


class TaskSets(Mapping[str, TaskSetFactory]):
    """The named task sets: a read-only mapping from name to the factory of its source.

    It lists the names registered in this process and those declared by installed packages; a
    declared name is imported, and registered, the first time it is looked up. A registered name
    wins over a declared one of the same name.

    Args:
        built_in: the names available without any registration or entry point.
    """

    def __init__(self, built_in: Mapping[str, TaskSetFactory]) -> None:
        self._factories: dict[str, TaskSetFactory] = {}
        for name, factory in built_in.items():
            self._factories[_checked_name(name)] = _checked_factory(name, factory)

    def register(self, name: str, factory: TaskSetFactory, *, replace: bool = False) -> None:
        """Make ``EnvConfig(task_set=name)`` build its source with ``factory()``.

        Raises:
            ConfigError: ``name`` is not a usable name, or is taken (registered, or declared by
                an installed package) and ``replace`` is False; ``factory`` is not callable.
        """
        name = _checked_name(name)
        if not replace and name in self._factories:
            raise ConfigError(
                f"register_task_set: task set {name!r} is already registered; pick another "
                f"name or pass replace=True. Taken: {sorted(self)}."
            )
        declared = None if replace else _declared(name)
        if declared is not None:
            raise ConfigError(
                f"register_task_set: task set {name!r} is already declared by {_origin(declared)}; "
                f"pick another name or pass replace=True. Taken: {sorted(self)}."
            )
        self._factories[name] = _checked_factory(name, factory)

    def __getitem__(self, name: str) -> TaskSetFactory:
        if name not in self._factories:
            declared = _declared(name) if isinstance(name, str) else None
            if declared is None:
                raise KeyError(name)
            self._factories[name] = _checked_factory(name, _load(name, declared), declared)
        return self._factories[name]

    def __contains__(self, name: object) -> bool:  # without importing a declared factory
        return name in self._factories or name in _declared_names()

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._factories, *_declared_names()]))

    def __len__(self) -> int:
        return len(set(self._factories) | set(_declared_names()))


def register_task_set(name: str, factory: TaskSetFactory, *, replace: bool = False) -> None:
    """Make ``EnvConfig(task_set=name)`` (and `CoreEnv`) draw curves from ``factory()``.

    ``factory`` is called with no arguments each time an environment is built on ``name`` and
    returns a `CurveSource`. A package can instead declare the name as an entry point of group
    `ENTRY_POINT_GROUP`, so that it is found without being imported first.

    Raises:
        ConfigError: ``name`` is not a non-empty str, reads as a file's path (ends in .npz or
            .csv, or holds a path separator), or is taken and ``replace`` is False; ``factory``
            is not callable.
    """
    TASK_SETS.register(name, factory, replace=replace)


def resolve_task_set(task_set: Any) -> CurveSource:
    """Turn an `EnvConfig.task_set` value (name, path, bank or source) into a `CurveSource`.

    A path ending in ``.csv`` is a CSV of training logs, read once with `bank_from_csv`; any
    other path is a bank `.npz` (`load_bank`).
    """
    if isinstance(task_set, CurveSource):
        return task_set
    if isinstance(task_set, os.PathLike) or (
        isinstance(task_set, str) and _reads_as_path(task_set)
    ):
        return _load_cached(str(Path(task_set).resolve()))
    factory = TASK_SETS.get(task_set) if isinstance(task_set, str) else None
    if factory is not None:
        source = factory()
        if not isinstance(source, CurveSource):
            raise ConfigError(
                f"EnvConfig.task_set {task_set!r}: its factory {factory!r} returned a "
                f"{type(source).__name__}, not a CurveSource."
            )
        return source
    raise ConfigError(
        f"EnvConfig.task_set {task_set!r} is not a known task set {sorted(TASK_SETS)}, a path "
        "to a bank .npz or a CSV of training logs, a CurveBank or a CurveSource. (Task sets of "
        "other packages, such as 'live', are found through their entry points: after pulling a "
        "new version of a source checkout, reinstall it with pip install -e .)"
    )


@functools.lru_cache(maxsize=8)
def _load_cached(path: str) -> CurveBank:
    """Banks are read-only, so many environments can share one loaded copy.

    A ``.csv`` file is read as training logs (`bank_from_csv`), any other as a bank `.npz`.
    """
    if path.lower().endswith(".csv"):
        return bank_from_csv(path)
    return load_bank(path)


def _reads_as_path(text: str) -> bool:
    """Whether `resolve_task_set` reads ``text`` as the path of a bank or CSV file."""
    return text.lower().endswith((".npz", ".csv")) or os.sep in text


def _declared_names() -> list[str]:
    """The task-set names installed packages declare (read from metadata: nothing is imported)."""
    return [point.name for point in entry_points(group=ENTRY_POINT_GROUP)]


def _declared(name: str) -> EntryPoint | None:
    """The entry point declaring task set ``name``, or None; two different ones are an error."""
    points = {point.value: point for point in entry_points(group=ENTRY_POINT_GROUP, name=name)}
    if len(points) > 1:
        raise ConfigError(
            f"task set {name!r} is declared by more than one installed package: "
            f"{', '.join(_origin(point) for point in points.values())}; uninstall all but one."
        )
    return next(iter(points.values()), None)


def _load(name: str, point: EntryPoint) -> Any:
    """Import a declared factory, saying which package declared it if that fails."""
    try:
        return point.load()
    except (ImportError, AttributeError) as e:
        raise ConfigError(
            f"EnvConfig.task_set {name!r} is declared by {_origin(point)}, which failed to "
            f"import: {e}"
        ) from e


def _origin(point: EntryPoint) -> str:
    """An entry point as a message names it: its target and the distribution declaring it."""
    dist = getattr(point, "dist", None)
    package = f" of the package {dist.name!r}" if dist is not None else ""
    return f"the entry point {point.value!r} (group {ENTRY_POINT_GROUP!r}){package}"


def _checked_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise ConfigError(
            f"register_task_set: name must be a non-empty str, got {type(name).__name__}: {name!r}."
        )
    if _reads_as_path(name):
        raise ConfigError(
            f"register_task_set: name {name!r} reads as the path of a file (it ends in .npz or "
            f".csv, or holds {os.sep!r}), so EnvConfig.task_set could never select it; pick a "
            "plain name."
        )
    return name


def _checked_factory(name: str, factory: Any, point: EntryPoint | None = None) -> TaskSetFactory:
    if not callable(factory):
        where = "given to register_task_set" if point is None else f"declared by {_origin(point)}"
        raise ConfigError(
            f"task set {name!r}: the factory {where} must be callable with no arguments and "
            f"return a CurveSource, got {type(factory).__name__}: {factory!r}."
        )
    return factory


# last in the module: building it runs the checks above, the same as for registered names
TASK_SETS = TaskSets(
    {
        "synthetic": SyntheticCurves,
        **{name: functools.partial(named_task_set, name) for name in NAMED_SPLITS},
    }
)
"""Every task-set name `EnvConfig.task_set` accepts (``sorted(TASK_SETS)`` lists them)."""
