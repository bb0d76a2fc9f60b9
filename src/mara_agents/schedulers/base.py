"""The scheduler interface shared by every method, and the helper turning a ranking into actions."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from coreenv import CoreEnv, Predictor

__all__ = ["Scheduler", "serve_in_order"]


class Scheduler(ABC):
    """Decides every step which slot each node trains.

    ``reset(env)`` is called after ``env.reset()`` at the start of each episode; ``act`` receives
    the observations and infos the env just returned and gives one action per live agent. A
    scheduler that reads predictor estimates from the observation names the predictor to attach
    to the environment in ``observation_predictor``.
    """

    name: str = "scheduler"
    observation_predictor: Predictor | None = None

    def reset(self, env: CoreEnv) -> None:
        """Remember the environment of the new episode."""
        self.env = env

    @abstractmethod
    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """One action per agent: a slot index, or ``K`` to idle."""


def serve_in_order(env: CoreEnv, slots: np.ndarray) -> dict[str, int]:
    """Give node i the i-th slot of ``slots`` (a feasible matching); nodes beyond it idle."""
    idle = env.config.num_slots
    actions = dict.fromkeys(env.agents, idle)
    for agent, slot in zip(env.agents, slots):
        actions[agent] = int(slot)
    return actions
