"""The methods a sweep can run, by name or as ``module:Class``, and the check of a sweep's names."""

from __future__ import annotations

import copy
import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from coreenv import CoreEnv, EnvConfig, check_arrival_prob
from coreenv.curves import TASK_SETS, resolve_task_set
from mara_agents.evaluation import decisions_of
from mara_agents.schedulers import EDF, FIFO, HOP, LARA, Oracle, RandomScheduler, Scheduler
from mara_agents.schedulers.base import observed_config, predictor_for
from mara_agents.schedulers.hop import HOP_TUNED
from mara_agents.schedulers.variants import VARIANTS

__all__ = [
    "DEFAULT_METHODS",
    "METHODS",
    "RETIRED",
    "SweepInputError",
    "load_checkpoint",
    "make_scheduler",
    "method_factory",
    "validate",
]


def _lara(predictor: str) -> Callable[[], Scheduler]:
    """LARA on a named predictor (`PREDICTORS`; the FM ones need torch: imported on use)."""

    def load() -> Scheduler:
        from mara_agents.predictors import make_predictor

        return LARA(predictor=make_predictor(predictor))

    return load


def _hop(predictor: str) -> Callable[[], Scheduler]:
    """HOP on a named predictor's sampled futures, with its tuned settings."""

    def load() -> Scheduler:
        from mara_agents.predictors import make_predictor

        return HOP(make_predictor(predictor), HOP_TUNED)

    return load


def _hop_wls() -> Scheduler:
    """HOP on WLS: one sample per task, its point estimate (a LARA-like planner)."""
    from mara_agents.predictors import WLSPredictor

    return HOP(WLSPredictor(), HOP_TUNED)


def _mara(variant: str) -> Callable[[], Scheduler]:
    """A shipped MARA variant (needs torch: imported on use)."""

    def load() -> Scheduler:
        from mara_agents.schedulers.mara import MARA

        return MARA.pretrained(variant)

    return load


def _mara_reading(predictor: str, name: str) -> Callable[[], Scheduler]:
    """The shipped MARA, not retrained, reading ``predictor`` for its network's estimates.

    A predictor that reads context moves them towards analogs of each task's kind, from what
    the information model gives.
    """

    def load() -> Scheduler:
        from mara_agents.predictors import make_predictor
        from mara_agents.schedulers.mara import MARA

        policy = MARA.pretrained("mara", predictors={"fm_mara_student": make_predictor(predictor)})
        policy.name = name
        return policy

    return load


EVENT_HOLD = 8
"""The most steps `mara_events` holds an action (chosen on training episodes: docs/mara.md)."""


def _mara_events() -> Scheduler:
    """The shipped MARA deciding at events of the slot table or every `EVENT_HOLD` steps.

    Its estimates are drawn only when it decides (`coreenv.core.lanes.defers_estimates`).
    """
    from coreenv import Decisions
    from mara_agents.schedulers.mara import MARA

    policy = MARA.pretrained("mara")
    policy.decisions = Decisions("events", hold=EVENT_HOLD)
    policy.name = "mara_events"
    return policy


def _ppo(method: str) -> Callable[[], Scheduler]:
    """A shipped MaskablePPO policy, played in its form (needs sb3-contrib: imported on use)."""

    def load() -> Scheduler:
        from mara_agents.baselines.maskable_ppo import SHIPPED, load_scheduler

        return load_scheduler(SHIPPED[method])

    return load


def _ippo(sets: bool) -> Callable[[], Scheduler]:
    """The shipped IPPO over live masks at events (needs torch: imported on use).

    It reads the node ids or, with ``sets``, the nodes as a set.
    """

    def load() -> Scheduler:
        from mara_agents.baselines.ippo import SHIPPED, SHIPPED_SETS, IPPOScheduler

        return IPPOScheduler.load(SHIPPED_SETS if sets else SHIPPED)

    return load


METHODS: dict[str, Callable[[], Scheduler]] = {
    "fifo": FIFO,
    "edf": EDF,
    "random": RandomScheduler,
    "lara": LARA,
    "lara_fm": _lara("fm"),
    "hop_fm": _hop("fm"),
    "lara_analog": _lara("fm_analog"),
    "hop_analog": _hop("fm_analog"),
    "lara_learned": _lara("fm_mara_learned"),
    "hop_learned": _hop("fm_mara_learned"),
    "hop_wls": _hop_wls,
    **{variant: _mara(variant) for variant in VARIANTS},
    "mara_analog": _mara_reading("fm_mara_analog", "mara_analog"),
    "mara_learned": _mara_reading("fm_mara_learned", "mara_learned"),
    "mara_events": _mara_events,
    "ppo_slots": _ppo("ppo_slots"),
    "ppo_sets": _ppo("ppo_sets"),
    "ppo_mlp": _ppo("ppo_mlp"),
    "ippo_live": _ippo(sets=False),
    "ippo_sets": _ippo(sets=True),
    "oracle": Oracle,
}
"""Schedulers by name, each a factory taking no arguments; MARA's come from `VARIANTS`."""

RETIRED = {
    "ppo_sb3": "ppo_slots (or ppo_mlp)",
    "ippo": "ippo_live",
}
"""Names of the first RL baselines (joint form, deciding every step; below a random matching),
retired, and the methods that replace them (docs/rl.md, *Shipped policies*)."""

DEFAULT_METHODS = ("fifo", "edf", "random", "lara", "mara", "oracle")
"""What the benchmark scripts compare unless told otherwise: the baselines, MARA and the oracle."""


class SweepInputError(ValueError):
    """A method, task set or arrival probability of a sweep is not valid; the message says why."""


def make_scheduler(method: str) -> Scheduler:
    """A scheduler from a method name or ``module:Class`` (constructed without arguments).

    ``module`` is looked up as ``python -m`` would: the current directory first, then the path.
    """
    if method in METHODS:
        return METHODS[method]()
    if method in RETIRED:
        raise SweepInputError(
            f"method {method!r} was retired (it decided every step in the joint form and "
            f"lost to a random matching): use {RETIRED[method]}."
        )
    if ":" not in method:
        raise SweepInputError(
            f"unknown method {method!r}: use one of {sorted(METHODS)} or module:Class."
        )
    module, name = method.split(":", 1)
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
        scheduler = scheduler_class()
    except TypeError as e:
        raise SweepInputError(
            f"scheduler {method!r} must be constructible without arguments: {e}"
        ) from e
    return _checked(method, scheduler)


def _checked(name: str, scheduler: Any) -> Any:
    """``scheduler`` if it has the scheduler interface; else `SweepInputError` naming ``name``."""
    missing = [m for m in ("reset", "act") if not callable(getattr(scheduler, m, None))]
    if missing:
        raise SweepInputError(f"scheduler {name!r} has no {' or '.join(missing)} method.")
    return scheduler


def method_factory(method: Any) -> tuple[str, Callable[[], Scheduler]]:
    """A sweep method's name and a factory of a fresh scheduler for each run of it.

    ``method`` is a name (`make_scheduler`), a scheduler object (deep-copied for each run), or a
    factory: a class or function returning one. Objects and factories are named by their
    ``name`` attribute, else their class's or function's name.
    """
    if isinstance(method, str):
        return method, functools.partial(make_scheduler, method)
    if callable(getattr(method, "act", None)) and not isinstance(method, type):
        name = getattr(method, "name", None) or type(method).__name__
        return str(name), functools.partial(copy.deepcopy, method)
    if callable(method):
        return str(getattr(method, "name", None) or method.__name__), method
    raise SweepInputError(
        f"method {method!r} is neither a name, a scheduler object (with act) nor a factory."
    )


def load_checkpoint(path: str | os.PathLike, predictors: dict | None = None) -> Scheduler:
    """The scheduler of a trained policy's file, by its format (needs torch: imported on use).

    A ``.zip`` is a MaskablePPO model, played in the form it was trained in
    (`mara_agents.baselines.maskable_ppo.load_scheduler`); a ``.pt`` is a MARA policy
    (`MARA.save`, named by the file's stem; ``predictors`` as `MARA.pretrained` shares them) or
    an IPPO policy (a run's ``best.pt``).
    """
    path = Path(path)
    if not path.is_file():
        raise SweepInputError(f"no checkpoint file at {path}.")
    if path.suffix == ".zip":
        from mara_agents.baselines.maskable_ppo import load_scheduler

        return load_scheduler(path)
    if path.suffix != ".pt":
        raise SweepInputError(
            f"{path}: a checkpoint is a MaskablePPO .zip or a MARA or IPPO .pt, "
            f"not {path.suffix!r}."
        )
    import torch

    keys = set(torch.load(path, map_location="cpu", weights_only=True))
    if {"mat_config", "model", "predictor"} <= keys:
        from mara_agents.schedulers.mara import MARA

        return MARA.pretrained(path.stem, path=path, predictors=predictors)
    if {"shape", "model"} <= keys:
        from mara_agents.baselines.ippo import IPPOScheduler

        return IPPOScheduler.load(path)
    raise SweepInputError(
        f"{path} is neither a MARA policy nor an IPPO policy (keys {sorted(keys)})."
    )


def _first_decision(scheduler: Scheduler, config: EnvConfig) -> None:
    """``scheduler``'s decision at the start of an episode of ``config`` (what it raises)."""
    env = CoreEnv(config, predictor=predictor_for(scheduler), decisions=decisions_of(scheduler))
    observations, infos = env.reset(seed=0)
    scheduler.reset(env)
    scheduler.act(observations, infos)


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
