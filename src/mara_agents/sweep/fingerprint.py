"""Fingerprints of what produced a sweep row, so results of edited code are never reused.

A row's fingerprint covers the method (`method_fingerprint`: the scheduler's classes, their
source, its parameters and weights, and its predictor's), the environment config, the bank file
of a path task set, and the installed packages' files (`package_digest`: every source, data and
checkpoint file of coreenv, curvegen and mara_agents), so any edit of the library redoes the rows.
Digests are the same in every process: nothing depends on object ids or hash seeds.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

import coreenv
from mara_agents.schedulers.base import predictor_for
from mara_agents.sweep.jobs import Job, env_config

__all__ = ["job_fingerprint", "method_fingerprint", "package_digest"]

PACKAGES = ("coreenv", "curvegen", "mara_agents")
"""The packages whose files every fingerprint covers."""
_DEPTH = 6  # how deep attributes are followed (scheduler -> predictor -> config -> fields -> …)


def method_fingerprint(scheduler: Any) -> str:
    """A digest of what decides a scheduler's actions: its classes and code, parameters, weights.

    Public attributes are followed a few levels deep (names starting with ``_`` hold state filled
    while playing, such as caches, and are skipped); arrays and torch tensors are hashed by dtype,
    shape and bytes. The predictor the scheduler declares is included.
    """
    digest = hashlib.sha256()
    _feed(digest, scheduler, depth=0, seen=set())
    _feed(digest, predictor_for(scheduler), depth=0, seen=set())
    return digest.hexdigest()[:16]


def job_fingerprint(method_digest: str, job: Job) -> str:
    """The row fingerprint: the method's digest, the environment and the installed code."""
    config = env_config(job)
    parts = [method_digest, repr(config), f"coreenv {coreenv.__version__}", package_digest()]
    task_set = config.task_set
    if isinstance(task_set, (str, os.PathLike)) and Path(task_set).suffix in (".npz", ".csv"):
        parts.append(_file_digest(Path(task_set)))  # a bank rewritten at the same path
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


@functools.cache
def package_digest() -> str:
    """A digest of every file of the installed packages (`PACKAGES`), computed once per process."""
    digest = hashlib.sha256()
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(f"{package}/{path.relative_to(root).as_posix()}".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else "missing"


def _feed(digest: Any, value: Any, depth: int, seen: set[int]) -> None:
    """Add ``value`` to ``digest`` in a form that is the same in every process."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        digest.update(f"{type(value).__name__}:{value!r};".encode())
        return
    if isinstance(value, Path):
        digest.update(f"path:{value.as_posix()};".encode())
        return
    if isinstance(value, np.ndarray):
        digest.update(f"array:{value.dtype}:{value.shape};".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
        return
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        _feed(digest, value.detach().cpu().numpy(), depth, seen)
        return
    if depth > _DEPTH or id(value) in seen:
        digest.update(b"...;")
        return
    seen = seen | {id(value)}
    if isinstance(value, (list, tuple)):
        digest.update(f"{type(value).__name__}[{len(value)}];".encode())
        for item in value:
            _feed(digest, item, depth + 1, seen)
        return
    if isinstance(value, (set, frozenset)):
        _feed(digest, sorted(value, key=repr), depth, seen)  # members are hashable values
        return
    if isinstance(value, dict):
        digest.update(f"dict[{len(value)}];".encode())
        for key in sorted(value, key=repr):
            _feed(digest, key, depth + 1, seen)
            _feed(digest, value[key], depth + 1, seen)
        return
    _feed_object(digest, value, depth, seen, torch)


def _feed_object(digest: Any, value: Any, depth: int, seen: set[int], torch: Any) -> None:
    """An object: its classes (names and module source), torch weights, public attributes."""
    for cls in type(value).__mro__:
        if cls is object:
            continue
        digest.update(f"class:{cls.__module__}.{cls.__qualname__};".encode())
        module = sys.modules.get(cls.__module__)
        if module is not None and not cls.__module__.startswith(("builtins", "torch")):
            try:
                digest.update(inspect.getsource(module).encode())
            except (OSError, TypeError):
                pass  # no source (built-in or interactive): the class name stands for it
    if torch is not None and isinstance(value, torch.nn.Module):
        for name, tensor in value.state_dict().items():
            digest.update(name.encode())
            _feed(digest, tensor, depth, seen)
    attributes = getattr(value, "__dict__", None)
    if attributes is None:  # slotted objects
        names = [n for cls in type(value).__mro__ for n in getattr(cls, "__slots__", ())]
        attributes = {n: getattr(value, n) for n in names if hasattr(value, n)}
    for name in sorted(attributes):
        if name.startswith("_") or name == "env":  # state filled while playing; set by reset
            continue
        if torch is not None and isinstance(value, torch.nn.Module) and name == "training":
            continue
        digest.update(f"attr:{name};".encode())
        _feed(digest, attributes[name], depth + 1, seen)
