"""Registers ``coreenv/CoRE-v0`` with PettingZoo (parallel and AEC) and Gymnasium on import."""

from __future__ import annotations

import gymnasium
import pettingzoo

__all__ = ["ENV_ID", "register_envs"]

ENV_ID = "coreenv/CoRE-v0"


def register_envs() -> None:
    """Add the environment to the registries once (importing twice must not warn)."""
    if ENV_ID not in pettingzoo.parallel_registry:
        pettingzoo.register("parallel", ENV_ID, entry_point="coreenv.core_v0:parallel_env")
    if ENV_ID not in pettingzoo.aec_registry:
        pettingzoo.register("aec", ENV_ID, entry_point="coreenv.core_v0:env")
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(ENV_ID, entry_point="coreenv.gym_env:CoreGymEnv")
