"""Version 1 of the CoRE-Learning environment: the PettingZoo-style entry points.

Bump to ``core_v2`` when anything that can change learning results changes (dynamics,
observations, rewards), so that benchmark numbers stay comparable.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from coreenv.core.env import CoreEnv
from coreenv.errors import ConfigError

__all__ = ["env", "parallel_env", "raw_env"]


class raw_env(parallel_to_aec_wrapper):  # noqa: N801 - PettingZoo's name for the AEC class
    """The AEC (turn-based) environment without wrappers: nodes act in index order.

    It wraps the parallel `CoreEnv` (``self.env``); keyword arguments as `parallel_env`.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(parallel_env(**kwargs))


def parallel_env(**kwargs: Any) -> CoreEnv:
    """The parallel environment.

    Keyword arguments are `EnvConfig` fields, ``config``, ``predictor`` and ``render_mode``;
    PettingZoo's ``max_cycles`` is accepted as the truncation bound ``max_steps``.
    """
    return CoreEnv(**_with_max_cycles(kwargs))


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment (`raw_env`) with PettingZoo's order-enforcing wrapper."""
    return OrderEnforcingWrapper(raw_env(**kwargs))


def _with_max_cycles(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Translate PettingZoo's ``max_cycles`` keyword into `EnvConfig.max_steps`."""
    if "max_cycles" not in kwargs:
        return kwargs
    kwargs = dict(kwargs)
    cycles = kwargs.pop("max_cycles")
    config = kwargs.get("config")
    given = kwargs.get("max_steps", None if config is None else config.max_steps)
    if given not in (None, cycles):
        raise ConfigError(
            f"max_cycles={cycles!r} and max_steps={given!r} disagree: "
            "max_cycles is PettingZoo's name for EnvConfig.max_steps; give one of them."
        )
    kwargs["max_steps"] = cycles
    return kwargs
