"""Old import paths of `mara_agents`, kept until 0.3.0: each warns and hands on the new place.

`MOVED_MODULES` maps a module's old path to its new one; an import of the old path (``import``,
``from … import``, `importlib.import_module`, unpickling) loads the new module under both names
and raises a `DeprecationWarning` naming the new path. `MOVED_NAMES` maps a name a package used
to export to the module that holds it now, `NAMES_MOVED_OUT` a module to where its moved names
went; the old module's ``__getattr__`` asks `moved_name`.
The new modules are found by name on use, so no package imports the ones above it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

__all__ = [
    "MOVED_MODULES",
    "MOVED_NAMES",
    "NAMES_MOVED_OUT",
    "REMOVAL",
    "install",
    "moved_name",
]

REMOVAL = "0.3.0"
"""The release that removes every old path below."""

MOVED_MODULES: dict[str, str] = {
    "mara_agents.predictors.prior": "mara_agents.fm_training.prior",
    "mara_agents.predictors.corpus": "mara_agents.fm_training.corpus",
    "mara_agents.predictors.flow_training": "mara_agents.fm_training.training",
    "mara_agents.predictors.flow_distill": "mara_agents.fm_training.distill",
    "mara_agents.predictors.folds": "mara_agents.fm_training.folds",
    "mara_agents.predictors.queries": "mara_agents.predictor_eval.queries",
    "mara_agents.predictors.clairvoyant": "mara_agents.diagnostics.clairvoyant",
    "mara_agents.predictors.analog": "mara_agents.diagnostics.analog",
    "mara_agents.schedulers.truth": "mara_agents.diagnostics.truth",
}
"""Old module path -> new module path."""

MOVED_NAMES: dict[tuple[str, str], str] = {
    ("mara_agents.predictors", "ClairvoyantPredictor"): "mara_agents.diagnostics",
    ("mara_agents.predictors", "ErrorLog"): "mara_agents.diagnostics",
    ("mara_agents.schedulers", "TruthHOP"): "mara_agents.diagnostics",
    ("mara_agents.schedulers", "TruthLARA"): "mara_agents.diagnostics",
}
"""(package, name it used to export) -> the module that exports it now."""

NAMES_MOVED_OUT: dict[str, str] = {
    "mara_agents.predictors.calibration": "mara_agents.fm_training.calibration_fit",
}
"""Module -> the module its moved names went to: a name in the new one's ``__all__`` is there."""


def _warn(old: str, new: str) -> None:
    warnings.warn(
        f"{old} is deprecated and will be removed in {REMOVAL}; use {new} instead.",
        DeprecationWarning,
        stacklevel=4,
    )


def moved_name(package: str, name: str) -> Any:
    """``package.name`` from where it lives now, with a `DeprecationWarning`.

    Raises AttributeError, as a module's ``__getattr__`` must, when ``name`` never lived there.
    """
    new = MOVED_NAMES.get((package, name))
    if new is None and package in NAMES_MOVED_OUT:
        target = NAMES_MOVED_OUT[package]
        new = target if name in importlib.import_module(target).__all__ else None
    if new is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    _warn(f"{package}.{name}", f"{new}.{name}")
    return getattr(importlib.import_module(new), name)


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds each old path of `MOVED_MODULES` and loads it as its new module."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED_MODULES[spec.name]
        _warn(spec.name, new)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The new module ran when it was imported; nothing is left to run."""


_FINDER = _MovedModuleFinder()


def install() -> None:
    """Let the old module paths import (once per process; `mara_agents` calls it)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
