"""Version 0 of the CoRE-Learning environment: the PettingZoo-style entry points.

Bump to ``core_v1`` when the dynamics change, so that benchmark numbers stay comparable.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec

from coreenv.core.env import CoreEnv

__all__ = ["env", "parallel_env", "raw_env"]

raw_env = CoreEnv


def parallel_env(**kwargs: Any) -> CoreEnv:
    """The parallel environment.

    Keyword arguments are `EnvConfig` fields, ``config``, ``predictor`` and ``render_mode``.
    """
    return CoreEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The AEC (turn-based) view of the same environment, via PettingZoo's `parallel_to_aec`."""
    return parallel_to_aec(CoreEnv(**kwargs))
