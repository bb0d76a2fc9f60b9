"""The scheduler interface shared by every method, and the helper turning a ranking into actions."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from coreenv import CoreEnv, EnvConfig, Predictor
from mara_agents.predictors import PREDICTORS, make_predictor

__all__ = [
    "DEFAULT_OBSERVATION_PREDICTOR",
    "BatchedScheduler",
    "Scheduler",
    "acts_in_batches",
    "observed_config",
    "predictor_for",
    "serve_in_order",
]

DEFAULT_OBSERVATION_PREDICTOR = "wls"
"""What a scheduler that declares nothing observes: WLS estimates, never silent zeros."""


class Scheduler(ABC):
    """Decides every step which slot each node trains.

    ``reset(env)`` is called after ``env.reset()`` at the start of each episode; ``act`` receives
    the observations and infos the env just returned and gives one action per live agent.

    ``observation_predictor`` declares whose estimates the scheduler reads from the observation
    (``EST_REMAINING``, ``EST_P_SUCCESS``): a `coreenv.Predictor`, a name in
    `mara_agents.predictors.PREDICTORS` (``"wls"``, ``"fm"``), or None for a scheduler that reads
    none (it then sees -1 there). Runners (`mara_agents.evaluate`, the sweep) attach what
    `predictor_for` resolves; the default gives WLS estimates. ``observation_quantiles`` are the
    levels of `coreenv.EnvConfig.estimate_quantiles` it reads (none by default); runners build
    its environments with them (`observed_config`).

    A scheduler that decides from the observation arrays alone may also implement `act_batch`:
    runners then play many episodes in lockstep, one call per step for all of them
    (`acts_in_batches`), with the same rows as one episode after another.
    """

    name: str = "scheduler"
    observation_predictor: Predictor | str | None = DEFAULT_OBSERVATION_PREDICTOR
    observation_quantiles: tuple[float, ...] = ()

    def reset(self, env: CoreEnv) -> None:
        """Remember the environment of the new episode."""
        self.env = env

    @abstractmethod
    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """One action per agent: a slot index, or ``K`` to idle."""

    def act_batch(self, obs: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Optional batched form: actions (E, M) for E episodes at once.

        Args:
            obs: (E, M, D) float32, row ``[e, i]`` node i's observation in episode e.
            action_mask: (E, K + 1) int8, the (shared) action mask of each episode.

        Must give, episode by episode, what `act` gives; it may not read ``self.env``.
        """
        raise NotImplementedError(f"{type(self).__name__} has no batched form.")


class BatchedScheduler(Scheduler):
    """A scheduler that decides from the observation arrays alone.

    Its `act` is `act_batch` on one episode, so it plays alone and in lockstep alike.
    """

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """`act_batch` on this one episode."""
        agents = list(observations)
        obs = np.stack([observations[agent]["observation"] for agent in agents])[None]
        mask = observations[agents[0]]["action_mask"][None]
        return dict(zip(agents, self.act_batch(obs, mask)[0].tolist()))

    @abstractmethod
    def act_batch(self, obs: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """Actions (E, M) for E episodes at once (`Scheduler.act_batch`)."""


def acts_in_batches(scheduler: Any) -> bool:
    """Whether ``scheduler`` (any object with ``reset`` and ``act``) implements ``act_batch``."""
    method = getattr(type(scheduler), "act_batch", None)
    return callable(method) and method is not Scheduler.act_batch


def predictor_for(scheduler: Any) -> Predictor | None:
    """The predictor to attach to the environment of ``scheduler``, from its declaration.

    Works for any object with ``reset`` and ``act``; one without ``observation_predictor`` gets the
    default (`DEFAULT_OBSERVATION_PREDICTOR`).
    """
    declared = getattr(scheduler, "observation_predictor", DEFAULT_OBSERVATION_PREDICTOR)
    if declared is None or isinstance(declared, Predictor):
        return declared
    if isinstance(declared, str) and declared in PREDICTORS:
        return make_predictor(declared)
    raise ValueError(
        f"{type(scheduler).__name__}.observation_predictor must be a Predictor, one of "
        f"{sorted(PREDICTORS)} or None, got {declared!r}."
    )


def observed_config(scheduler: Any, config: EnvConfig) -> EnvConfig:
    """``config`` with the quantile levels ``scheduler`` reads (its ``observation_quantiles``).

    A scheduler that declares none plays ``config`` as given; one whose levels differ from levels
    the config already asks for is refused (its policy would read columns it never learned).
    """
    levels = tuple(getattr(scheduler, "observation_quantiles", ()))
    if not levels or config.estimate_quantiles == levels:
        return config
    if config.estimate_quantiles:
        raise ValueError(
            f"{type(scheduler).__name__} reads the quantile levels {levels}; the episode's "
            f"EnvConfig.estimate_quantiles asks for {config.estimate_quantiles}."
        )
    return dataclasses.replace(config, estimate_quantiles=levels)


def serve_in_order(env: CoreEnv, slots: np.ndarray) -> dict[str, int]:
    """Give node i the i-th slot of ``slots`` (a feasible matching); nodes beyond it idle."""
    idle = env.config.num_slots
    actions = dict.fromkeys(env.agents, idle)
    for agent, slot in zip(env.agents, slots):
        actions[agent] = int(slot)
    return actions
