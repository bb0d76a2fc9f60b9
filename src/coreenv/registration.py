"""Registers ``coreenv/CoRE-v1`` with PettingZoo (parallel and AEC) and Gymnasium on import.

Gymnasium also gets the sequential form, ``coreenv/CoRE-Sequential-v1``, and
``coreenv/CoRE-Learn-v1``, the same form with the defaults of the documented recipe that learns.
The retired ``coreenv/CoRE-v0`` stays registered so that making it says what to use instead.
"""

from __future__ import annotations

from types import MappingProxyType

import gymnasium
import pettingzoo

from coreenv.wls import WLSEstimates

__all__ = [
    "ENV_ID",
    "LEARN_DEFAULTS",
    "LEARN_ENV_ID",
    "RETIRED_IDS",
    "SEQUENTIAL_ENV_ID",
    "register_envs",
]

ENV_ID = "coreenv/CoRE-v1"
SEQUENTIAL_ENV_ID = "coreenv/CoRE-Sequential-v1"
"""Gymnasium only: one node's choice per step (`coreenv.CoreSequentialEnv`; its vector form
`coreenv.SequentialVectorEnv`)."""
LEARN_ENV_ID = "coreenv/CoRE-Learn-v1"
"""Gymnasium only: the form that learns (docs/rl.md, *The recipe that learns*): the sequential
form with `LEARN_DEFAULTS`, the environment the shipped RL baseline ``ppo``'s recipe
trains on. Keyword arguments of ``gymnasium.make`` / ``make_vec`` override them."""
LEARN_DEFAULTS = MappingProxyType(
    {
        "decisions": "events",  # hold the joint action until the slot table changes (or 8 steps)
        "predictor": WLSEstimates(),  # LARA's WLS estimates in the observation, computed in-engine
        "task_set": "id_train",  # the ID training runs; the test runs stay unseen
    }
)
"""`CoreSequentialEnv` / `SequentialVectorEnv` keyword arguments of `LEARN_ENV_ID`. The slots are
listed as the table holds them, tasks are admitted in arrival order and the load is the cluster's
default (`coreenv.config.default_arrival_prob`: p = 0.04 at four equal nodes), as in the recipe."""
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
    if LEARN_ENV_ID not in gymnasium.registry:
        gymnasium.register(
            LEARN_ENV_ID,
            entry_point="coreenv.shells.sequential:CoreSequentialEnv",
            vector_entry_point="coreenv.shells.sequential_vector:SequentialVectorEnv",
            kwargs=dict(LEARN_DEFAULTS),
        )
    if RETIRED_IDS[0] not in gymnasium.registry:
        gymnasium.register(RETIRED_IDS[0], entry_point="coreenv.core_v0:gym_env")
