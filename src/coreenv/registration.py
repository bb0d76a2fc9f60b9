"""Registers ``coreenv/CoRE-v1`` with PettingZoo (parallel and AEC) and Gymnasium on import.

The retired ``coreenv/CoRE-v0`` stays registered so that making it says what to use instead.
"""

from __future__ import annotations

import gymnasium
import pettingzoo

__all__ = ["ENV_ID", "RETIRED_IDS", "SEQUENTIAL_ENV_ID", "register_envs"]

ENV_ID = "coreenv/CoRE-v1"
SEQUENTIAL_ENV_ID = "coreenv/CoRE-Sequential-v1"
"""Gymnasium only: one node's choice per step (`coreenv.CoreSequentialEnv`; its vector form
`coreenv.SequentialVectorEnv`)."""
RETIRED_IDS = ("coreenv/CoRE-v0",)


def register_envs() -> None:
    """Add the environments to the registries once (importing twice must not warn)."""
    entry_points = {ENV_ID: "coreenv.core_v1", RETIRED_IDS[0]: "coreenv.core_v0"}
    for env_id, module in entry_points.items():
        if env_id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", env_id, entry_point=f"{module}:parallel_env")
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=f"{module}:env")
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            ENV_ID,
            entry_point="coreenv.shells.gym:CoreGymEnv",
            vector_entry_point="coreenv.shells.vector:CoreVectorEnv",
        )
    if SEQUENTIAL_ENV_ID not in gymnasium.registry:
        gymnasium.register(
            SEQUENTIAL_ENV_ID,
            entry_point="coreenv.shells.sequential:CoreSequentialEnv",
            vector_entry_point="coreenv.shells.sequential_vector:SequentialVectorEnv",
        )
    if RETIRED_IDS[0] not in gymnasium.registry:
        gymnasium.register(RETIRED_IDS[0], entry_point="coreenv.core_v0:gym_env")
