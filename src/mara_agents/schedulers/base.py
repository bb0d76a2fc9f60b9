"""The scheduler interface shared by every method, and the helper turning a ranking into actions."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from coreenv import CoreEnv, Decisions, EnvConfig, Predictor, SchedulerView
from mara_agents.predictors import PREDICTORS, make_predictor

__all__ = [
    "DEFAULT_OBSERVATION_PREDICTOR",
    "EpisodeMemo",
    "Scheduler",
    "acts_in_batches",
    "observed_config",
    "observes_estimates",
    "predictor_for",
    "serve_in_order",
    "serve_orders",
]

DEFAULT_OBSERVATION_PREDICTOR = "wls"
"""What a scheduler that declares nothing observes: WLS estimates, never silent zeros."""


class Scheduler:
    """Decides every step which slot each node trains.

    A scheduler implements one of two methods:

    - ``act_view(view)``: actions (E, M) for the E episodes of a `coreenv.SchedulerView`. Every
      shipped scheduler does; runners then play many episodes in lockstep, one call per step for
      all of them (`acts_in_batches`), with the same rows as one episode after another, and `act`
      is ``act_view`` on the one episode of ``env.view()``.
    - ``act(observations, infos)``: one action per live agent, from what ``env.step`` returned
      and what ``self.env`` shows (``reset(env)`` is called after ``env.reset()`` at the start of
      each episode). Runners play such a scheduler one episode at a time.

    ``observation_predictor`` declares whose estimates the scheduler reads from the observation
    (``EST_REMAINING``, ``EST_P_SUCCESS``): a `coreenv.Predictor`, a name in
    `mara_agents.predictors.PREDICTORS` (``"wls"``, ``"fm"``), or None for a scheduler that reads
    none (it then sees -1 there). Runners (`mara_agents.evaluate`, the sweep) attach what
    `predictor_for` resolves; the default gives WLS estimates. ``observation_quantiles`` are the
    levels of `coreenv.EnvConfig.estimate_quantiles` it reads (none by default); runners build
    its environments with them (`observed_config`). ``clairvoyant`` schedulers (the oracle) get
    views holding the hidden truth. ``decisions`` (a `coreenv.Decisions`; None: every step) is
    the decision form it plays in: runners hold its joint action between events of that form
    (a policy trained in the event form declares it). ``observation_kind_fields``: for a policy
    that reads the observation's columns, the category-id columns it reads where the episode
    shows descriptions (`coreenv.EnvConfig.kind_fields`; ``()``: none, the layout it was trained
    on); None (default) for a scheduler that reads the view, which plays any layout.
    ``observation_cluster``: the policy reads the cluster's columns (node speeds, each slot's last
    node and resume cost), so runners show them on every cluster, equal nodes as speeds of 1.
    """

    name: str = "scheduler"
    observation_predictor: Predictor | str | None = DEFAULT_OBSERVATION_PREDICTOR
    observation_quantiles: tuple[float, ...] = ()
    observation_kind_fields: tuple[str, ...] | None = None
    observation_cluster: bool = False
    clairvoyant: bool = False
    decisions: Decisions | None = None

    def reset(self, env: CoreEnv) -> None:
        """Remember the environment of the new episode."""
        self.env = env

    def act(self, observations: dict[str, Any], infos: dict[str, Any]) -> dict[str, int]:
        """One action per agent (a slot index, or ``K`` to idle): `act_view` on this episode."""
        actions = self.act_view(self.env.view(self.clairvoyant))[0]
        return dict(zip(self.env.agents, actions.tolist()))

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """Actions (E, M), a slot index or ``K`` (idle) per node, for every episode of ``view``.

        It may not read ``self.env``: lockstep play has none.
        """
        raise NotImplementedError(
            f"{type(self).__name__} implements neither act(observations, infos) nor act_view(view)."
        )


class EpisodeMemo:
    """Values computed once per (episode, task, batches trained), e.g. a predictor's estimates.

    What belongs to episodes that left the view is forgotten, so a long lockstep run keeps only
    its running episodes' values.
    """

    def __init__(self) -> None:
        self._values: dict[tuple[int, int, int], Any] = {}
        self._episodes: frozenset[int] = frozenset()

    def rows(
        self,
        view: SchedulerView,
        episodes: np.ndarray,
        slots: np.ndarray,
        compute: Callable[[np.ndarray, np.ndarray], Sequence],
    ) -> list:
        """The value of each ``(episodes[i], slots[i])`` task of ``view`` at its batches.

        ``compute(episodes, slots)`` gives those not known yet, one row per task, in one call.
        """
        running = frozenset(view.episode.tolist())
        if running != self._episodes:
            self._values = {k: v for k, v in self._values.items() if k[0] in running}
            self._episodes = running
        keys = list(
            zip(
                view.episode[episodes].tolist(),
                view.uid[episodes, slots].tolist(),
                view.batches[episodes, slots].tolist(),
            )
        )
        missing = [i for i, key in enumerate(keys) if key not in self._values]
        if missing:
            for i, row in zip(missing, compute(episodes[missing], slots[missing])):
                self._values[keys[i]] = row
        return [self._values[key] for key in keys]


def acts_in_batches(scheduler: Any) -> bool:
    """Whether ``scheduler`` (any object with ``reset`` and ``act``) plays by ``act_view``.

    It does if its class implements ``act_view`` and does not override ``act`` below the class
    that implements it (a subclass of FIFO that changes only ``act`` plays by its ``act``).
    """
    mro = type(scheduler).__mro__
    views = next((cls for cls in mro if "act_view" in vars(cls)), None)
    if views is None or views is Scheduler or not callable(vars(views)["act_view"]):
        return False
    acts = next(cls for cls in mro if "act" in vars(cls))
    return issubclass(views, acts)


def observes_estimates(scheduler: Any) -> bool:
    """Whether ``scheduler``'s environment gets a predictor (its declaration; nothing is built)."""
    return getattr(scheduler, "observation_predictor", DEFAULT_OBSERVATION_PREDICTOR) is not None


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
    """``config`` with the columns ``scheduler``'s policy reads.

    Its quantile levels (``observation_quantiles``), category fields
    (``observation_kind_fields``, where the config shows descriptions) and, for one that reads
    the cluster (``observation_cluster``), the cluster's columns: equal nodes shown as speeds of 1,
    the same episodes (speeds are all 1 either way). A scheduler that
    declares no levels plays the config's; one whose levels differ from levels the config
    already asks for is refused (its policy would read columns it never learned).
    """
    fields = getattr(scheduler, "observation_kind_fields", None)
    if fields and config.information == "prefix":
        raise ValueError(
            f"{type(scheduler).__name__} reads the category columns of {tuple(fields)}; play it "
            "where tasks are described: EnvConfig.information 'description' or 'history' "
            "(coreenv sweep --information)."
        )
    if fields is not None and config.information != "prefix":
        config = dataclasses.replace(config, kind_fields=tuple(fields))
    if getattr(scheduler, "observation_cluster", False) and not config.cluster_shown:
        config = dataclasses.replace(config, node_speeds="uniform")
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


def serve_orders(view: SchedulerView, orders: Sequence[np.ndarray]) -> np.ndarray:
    """(E, M) actions: in episode e, node i trains ``orders[e][i]``; nodes beyond it idle."""
    num_nodes, idle = view.num_nodes, view.num_slots
    actions = np.full((len(orders), num_nodes), idle, np.int64)
    for e, order in enumerate(orders):
        served = order[:num_nodes]
        actions[e, : served.size] = served
    return actions
