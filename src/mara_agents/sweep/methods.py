"""The methods a sweep can run, by name or as ``module:Class``, and the check of a sweep's names."""

from __future__ import annotations

import ast
import copy
import functools
import importlib
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coreenv import CoreEnv, EnvConfig
from coreenv.config import check_arrival_prob
from coreenv.curves import TASK_SETS, resolve_task_set
from mara_agents.evaluation import decisions_of
from mara_agents.schedulers import EDF, FIFO, HOP, LARA, Oracle, RandomScheduler, Scheduler
from mara_agents.schedulers.base import observed_config, predictor_for
from mara_agents.schedulers.hop import HOP_TUNED

__all__ = [
    "DEFAULT_METHODS",
    "METHODS",
    "MOVED",
    "RENAMED",
    "Method",
    "SweepInputError",
    "load_checkpoint",
    "make_scheduler",
    "method_factory",
    "playable",
    "validate",
]


@dataclass(frozen=True)
class Method:
    """A sweep method: what builds a fresh scheduler, and what it is in a few words."""

    make: Callable[[], Scheduler]
    about: str


def _lara_fm() -> Scheduler:
    """LARA on the flow-matching predictor (needs torch: imported on use)."""
    from mara_agents.predictors import make_predictor

    return LARA(predictor=make_predictor("fm"))


def _hop() -> Scheduler:
    """HOP on the flow-matching predictor's sampled futures, with its tuned settings."""
    from mara_agents.predictors import make_predictor

    return HOP(make_predictor("fm"), HOP_TUNED)


def _mara() -> Scheduler:
    """The shipped MARA, one network for every cluster (needs torch: imported on use)."""
    from mara_agents.schedulers.mara import MARA

    return MARA.pretrained("mara")


def _ppo() -> Scheduler:
    """The shipped slot-set MaskablePPO (needs sb3-contrib: imported on use)."""
    from mara_agents.baselines.maskable_ppo import SHIPPED, load_scheduler

    return load_scheduler(SHIPPED)


METHODS: dict[str, Method] = {
    "fifo": Method(FIFO, "first come, first served"),
    "edf": Method(EDF, "earliest deadline first"),
    "random": Method(RandomScheduler, "a random matching of nodes to tasks"),
    "lara": Method(LARA, "LARA, the paper's baseline, on WLS estimates"),
    "lara_fm": Method(_lara_fm, "LARA on the flow-matching predictor's estimates"),
    "hop": Method(_hop, "HOP: LARA's plan over the flow-matching predictor's sampled futures"),
    "mara": Method(_mara, "MARA: the trained Multi-Agent Transformer on flow-matching estimates"),
    "ppo": Method(_ppo, "MaskablePPO trained from scratch (the slot-set RL baseline)"),
    "oracle": Method(Oracle, "the clairvoyant planner: an upper reference, not a scheduler"),
}
"""The schedulers a sweep plays by name (``coreenv sweep --help`` lists them with ``about``)."""

MOVED = {
    **dict.fromkeys(
        (
            "mara_wls",
            "mara_noshape",
            "mara_history",
            "mara_analog",
            "mara_learned",
            "mara_events",
            "mara_sets",
        ),
        "a study's variant of MARA",
    ),
    **dict.fromkeys(
        ("lara_analog", "lara_learned", "hop_analog", "hop_learned", "hop_wls"),
        "a study's planner",
    ),
    **dict.fromkeys(("ppo_slots", "ppo_mlp", "ippo_live", "ippo_sets"), "a study's RL baseline"),
}
"""Method names of 0.1.0 and 0.2.0 that left the package for the lab (``lab/``, reached as
``coreenv_lab.methods:NAME``, a function); asked for by name, they say so."""
RENAMED = {"hop_fm": "hop", "ppo_sets": "ppo"}
"""Names whose scheduler plays under another name now."""

DEFAULT_METHODS = ("fifo", "edf", "random", "lara", "mara", "oracle")
"""What the benchmark scripts compare unless told otherwise: the baselines, MARA and the oracle."""


class SweepInputError(ValueError):
    """A method, task set or arrival probability of a sweep is not valid; the message says why."""


def make_scheduler(method: str) -> Scheduler:
    """A scheduler from a method name or ``module:Class``, with keyword arguments if given.

    ``module:Class(key=value, ...)`` builds ``Class(key=value, ...)``: each value is a Python
    literal (``3``, ``0.5``, ``'a'``, ``True``) or else text (``weights=w.npy``). ``module`` is
    looked up as ``python -m`` would: the current directory first, then the path.
    """
    if method in METHODS:
        return METHODS[method].make()
    if method in MOVED:
        raise SweepInputError(
            f"method {method!r} is {MOVED[method]}: it left the package in 0.3.0 for the lab "
            f"(coreenv_lab.methods:{method} in a clone, with pip install -e lab); the methods "
            f"are {sorted(METHODS)}."
        )
    if method in RENAMED:
        raise SweepInputError(f"method {method!r} is now called {RENAMED[method]!r}.")
    if ":" not in method:
        raise SweepInputError(
            f"unknown method {method!r}: use one of {sorted(METHODS)} or module:Class."
        )
    module, name, kwargs = _parse_spec(method)
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        scheduler_class = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, SyntaxError) as e:
        raise SweepInputError(
            f"cannot import scheduler {method!r}: {e} (looked in the current directory {cwd} "
            "and on sys.path)."
        ) from e
    try:
        scheduler = scheduler_class(**kwargs)
    except TypeError as e:
        raise SweepInputError(f"cannot build scheduler {method!r}: {e}") from e
    return _checked(method, scheduler)


_SPEC = re.compile(r"^(?P<module>[\w.]+):(?P<name>\w+)(?:\((?P<args>.*)\))?$", re.S)


def _parse_spec(method: str) -> tuple[str, str, dict[str, Any]]:
    """``module``, ``Class`` and the keyword arguments of ``module:Class(key=value, ...)``."""
    match = _SPEC.match(method.strip())
    call = None
    if match is not None:
        try:
            call = ast.parse(f"f({match['args'] or ''})", mode="eval").body
        except SyntaxError:
            pass
    if call is None or call.args or any(k.arg is None for k in call.keywords):
        raise SweepInputError(
            f"method {method!r} is not module:Class or module:Class(key=value, ...) "
            "(arguments are given by name)."
        )
    source = f"f({match['args'] or ''})"
    kwargs: dict[str, Any] = {}
    for keyword in call.keywords:
        try:
            kwargs[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:  # not a literal: the text as written (a path, a name)
            kwargs[keyword.arg] = ast.get_source_segment(source, keyword.value)
    return match["module"], match["name"], kwargs


def _checked(name: str, scheduler: Any) -> Any:
    """``scheduler`` if it has the scheduler interface; else `SweepInputError` naming ``name``."""
    missing = [m for m in ("reset", "act") if not callable(getattr(scheduler, m, None))]
    if missing:
        raise SweepInputError(f"scheduler {name!r} has no {' or '.join(missing)} method.")
    return scheduler


def method_factory(method: Any) -> tuple[str, Callable[[], Scheduler]]:
    """A sweep method's name and a factory of a fresh scheduler for each run of it.

    ``method`` is a name or ``module:Class`` (`make_scheduler`), a scheduler object (deep-copied
    for each run), or a factory: a class or function returning one. Objects, factories and
    ``module:Class`` are named by their ``name`` attribute, else by their class's or function's
    name (``module:Class``: by the text given).
    """
    if isinstance(method, str):
        return _label(method), functools.partial(make_scheduler, method)
    if callable(getattr(method, "act", None)) and not isinstance(method, type):
        name = getattr(method, "name", None) or type(method).__name__
        return str(name), functools.partial(copy.deepcopy, method)
    if callable(method):
        return str(getattr(method, "name", None) or method.__name__), method
    raise SweepInputError(
        f"method {method!r} is neither a name, a scheduler object (with act) nor a factory."
    )


@functools.cache
def _label(method: str) -> str:
    """A method's name in results: a built-in's name, else its scheduler's own ``name``."""
    if method in METHODS or ":" not in method:
        return method
    name = getattr(make_scheduler(method), "name", None)
    return name if isinstance(name, str) and name and name != Scheduler.name else method


def load_checkpoint(path: str | os.PathLike, predictors: dict | None = None) -> Scheduler:
    """The scheduler of a trained policy's file, by its format (needs torch: imported on use).

    A ``.zip`` is a MaskablePPO model, played in the form it was trained in
    (`mara_agents.baselines.maskable_ppo.load_scheduler`); a ``.pt`` is a MARA policy
    (`MARA.save`, named by the file's stem; ``predictors`` as `MARA.pretrained` shares them).
    """
    path = Path(path)
    if not path.is_file():
        raise SweepInputError(f"no checkpoint file at {path}.")
    if path.suffix == ".zip":
        from mara_agents.baselines.maskable_ppo import load_scheduler

        return load_scheduler(path)
    if path.suffix != ".pt":
        raise SweepInputError(
            f"{path}: a checkpoint is a MaskablePPO .zip or a MARA .pt, "
            f"not {path.suffix!r}."
        )
    import torch

    keys = set(torch.load(path, map_location="cpu", weights_only=True))
    if {"mat_config", "model", "predictor"} <= keys:
        from mara_agents.schedulers.mara import MARA

        return MARA.pretrained(path.stem, path=path, predictors=predictors)
    raise SweepInputError(f"{path} is not a MARA policy (keys {sorted(keys)}).")


def _first_decision(scheduler: Scheduler, config: EnvConfig) -> None:
    """``scheduler``'s decision at the start of an episode of ``config`` (what it raises)."""
    env = CoreEnv(config, predictor=predictor_for(scheduler), decisions=decisions_of(scheduler))
    observations, infos = env.reset(seed=0)
    scheduler.reset(env)
    scheduler.act(observations, infos)


def playable(methods: Iterable[str], env: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The ``methods`` that play episodes of ``env`` (`EnvConfig` fields), and why the rest do not.

    The default methods of a command are those that play its cluster: MARA, say, reads no node
    speeds, so a mixed cluster leaves it out with its reason rather than stopping the run.
    """
    kept, left_out = [], {}
    for method in methods:
        try:
            validate([method], [], [], env)
            kept.append(method)
        except SweepInputError as e:
            left_out[method] = str(e)
    return kept, left_out


def validate(
    methods: Iterable[Any],
    task_sets: Iterable[str],
    arrival_prob: Iterable[float],
    env: Mapping[str, Any] | None = None,
) -> None:
    """Check a sweep's methods, task sets and arrival probabilities first; raise `SweepInputError`.

    Methods are anything `method_factory` takes; each is built once and checked, against the
    episodes' other `EnvConfig` fields ``env`` too: a policy reading category columns needs
    descriptions, and each method makes its first decision on an episode of ``env`` (a policy
    trained on another cluster's layout is refused here, not after the work has started).
    """
    episodes = EnvConfig(**(env or {}))
    for method in methods:
        name, factory = method_factory(method)
        scheduler = _checked(name, factory())
        try:
            _first_decision(scheduler, observed_config(scheduler, episodes))
        except ValueError as e:  # a bad observation_predictor, a layout it cannot read
            raise SweepInputError(f"method {name!r}: {e}") from e
    for task_set in task_sets:
        try:
            resolve_task_set(task_set)
        except ValueError as e:  # ConfigError, BankError
            raise SweepInputError(
                f"task set {task_set!r}: {e} Valid names: {sorted(TASK_SETS)}."
            ) from e
    for p in arrival_prob:
        try:
            check_arrival_prob(p, "arrival_prob")
        except ValueError as e:
            raise SweepInputError(str(e)) from e
