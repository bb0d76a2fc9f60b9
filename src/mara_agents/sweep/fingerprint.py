"""Fingerprints of what produced a sweep row, so results of edited code are never reused."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import sys
from typing import Any

import numpy as np

import coreenv
from mara_agents.schedulers.base import predictor_for
from mara_agents.sweep.jobs import Job, env_config

__all__ = ["job_fingerprint", "method_fingerprint"]

_DEPTH = 3  # scheduler -> its predictor -> the predictor's config -> the config's fields


def method_fingerprint(scheduler: Any) -> str:
    """A digest of what decides a scheduler's actions: its code, parameters and predictor.

    It covers the source files of the scheduler's classes (and its predictor's), the values of
    their attributes, and the weights of any torch module they hold: edit the scheduler or swap a
    checkpoint and the digest changes. Code it calls in other modules is not covered.
    """
    digest = hashlib.sha256()
    _feed(digest, scheduler, depth=0)
    _feed(digest, predictor_for(scheduler), depth=0)
    return digest.hexdigest()[:16]


def job_fingerprint(method_digest: str, job: Job) -> str:
    """The row fingerprint: method digest, environment config and package version."""
    config = env_config(dataclasses.replace(job, fingerprint=""))
    text = f"{method_digest}|{config!r}|coreenv {coreenv.__version__}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _feed(digest: Any, value: Any, depth: int) -> None:
    """Add ``value`` to ``digest``: sources of its classes, then its state, a few levels deep."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, tuple)):
        digest.update(repr(value).encode())
        return
    if isinstance(value, np.ndarray):
        digest.update(value.tobytes())
        return
    if isinstance(value, (list, dict)):
        items = sorted(value.items(), key=repr) if isinstance(value, dict) else enumerate(value)
        for key, item in items if depth < _DEPTH else ():
            digest.update(repr(key).encode())
            _feed(digest, item, depth + 1)
        return
    state_dict = getattr(value, "state_dict", None)
    if callable(state_dict) and "torch" in sys.modules:  # a torch module: its weights
        for name, tensor in state_dict().items():
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().numpy().tobytes())
    for cls in type(value).__mro__:
        if cls.__module__ in ("builtins", "abc", "typing") or cls.__module__.startswith("torch"):
            continue
        try:
            digest.update(inspect.getsource(sys.modules[cls.__module__]).encode())
        except (OSError, TypeError, KeyError):
            digest.update(cls.__qualname__.encode())
    if depth < _DEPTH and hasattr(value, "__dict__") and not callable(state_dict):
        for name, item in sorted(vars(value).items()):
            if name != "env":  # set by reset, not part of the scheduler
                digest.update(name.encode())
                _feed(digest, item, depth + 1)
