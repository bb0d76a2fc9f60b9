"""Version 0 of the environment, retired: its entry points raise, pointing to version 1.

Package 0.2.0 changed what a node observes without a predictor (0 → −1), which can change
learning results, so the id moved to ``coreenv/CoRE-v1`` (docs/environment.md, Version History).
The module stays (as PettingZoo answers a retired version with an error naming the new one), so that
``core_v0`` and the id ``coreenv/CoRE-v0`` answer with this error rather than not being found.
"""

from __future__ import annotations

from typing import Any, NoReturn

from coreenv.errors import ConfigError

__all__ = ["RETIRED", "env", "gym_env", "parallel_env", "raw_env"]

RETIRED = (
    "coreenv/CoRE-v0 (core_v0) is retired: package 0.2.0 changed what a node observes without a "
    "predictor (0 -> -1). Use coreenv/CoRE-v1 (coreenv.core_v1), or install coreenv 0.1.0 for "
    "version 0."
)


def parallel_env(**kwargs: Any) -> NoReturn:
    """Raises `ConfigError`: version 0 is retired."""
    raise ConfigError(RETIRED)


env = raw_env = gym_env = parallel_env
