"""`CoreEnv`: the CoRE-Learning PettingZoo `ParallelEnv`, a shell over one lane of `BatchedCore`.

`parallel_env` is its PettingZoo factory (`coreenv.core_v1`).
"""

from __future__ import annotations

import warnings
from typing import Any, NoReturn

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from coreenv.compat import OracleView, SlotTable
from coreenv.config import EnvConfig, make_config
from coreenv.core import engine
from coreenv.core.events import Decisions, make_decisions
from coreenv.masks import action_indices, idle_reasons
from coreenv.core.metrics import metrics
from coreenv.shells.spaces import observation_space, state_space
from coreenv.episodes.scenarios import Scenario
from coreenv.core.views import SchedulerView
from coreenv.curves import CurveSource
from coreenv.errors import ConfigError, InvalidActionError
from coreenv.predictor import Predictor
from coreenv.shells.batched import BatchedCore
from coreenv.shells.render import Rendering, ansi_table

__all__ = ["CoreEnv", "parallel_env"]


class CoreEnv(ParallelEnv):
    """CoRE-Learning with dynamic arrivals, deadlines and discrete compute nodes (design §2).

    ## Description
    Learning tasks arrive over time, each with a hidden loss curve, a target loss and a deadline.
    ``M`` compute nodes decide every step which of the ``K`` task slots to train; a task succeeds
    when a revealed loss reaches its target, and fails when its deadline comes first. The team
    wants to complete as many tasks as possible. Training demand is never shown: it is revealed
    only through the losses of training.

    ## Agents
    ``node_0 … node_{M-1}``, cooperative, acting simultaneously.

    ## Action Space
    ``Discrete(K + 1)``: ``j < K`` trains the task in slot ``j`` for ``batches_per_step`` batches,
    ``K`` idles. Two nodes naming one slot (the later node, by index, loses) or a node naming an
    empty slot is invalid: by ``invalid_action`` the node idles (``infos[agent]["invalid_action"]``
    says why) or `InvalidActionError` is raised.

    ## Observation Space
    ``{"observation": Box(-1000, 1000, (M + 3 + F·K,), float32),``
    `` "action_mask": Box(0, 1, (K + 1,), int8)}``

    =============  =====================================================  ================
    part           content                                                range
    =============  =====================================================  ================
    [0, M)         one-hot node id                                        {0, 1}
    M + 0          t / arrival_horizon                                    [0, ~1.4]
    M + 1          waiting tasks / K                                      [0, inf)
    M + 2          nodes beyond the occupied slots / M                    [0, 1]
    M + 3 + Fj …   slot j's block (`SlotFeature`): occupied, log(L/L0),   see SlotFeature
                   log(eps/L0), time left, batches, log-progress q,
                   ready, predictor's remaining and P(success), then
                   its quantiles of the remaining batches
    =============  =====================================================  ================

    ``F = 9 + Q``: one quantile column per level of ``estimate_quantiles`` (Q = 0 by default).
    Empty slots are all zero. Without an attached predictor every estimate feature of an occupied
    slot reads ``NO_PREDICTOR`` (-1), never a value a predictor could give. ``state()`` is the
    same vector without the one-hot id.

    ## Action Mask
    int8, 1 for occupied slots and for idle (always allowed). It cannot express conflicts between
    nodes, which are resolved as above.

    ## Rewards
    A shared team reward ``r_t = successes_t + beta (Phi_{t+1} - Phi_t)`` with the log-progress
    potential ``Phi_t = sum_k q_k(t)`` over tasks in the system. With ``beta = 0`` (default) it is
    the number of tasks completed in the step; since ``Phi`` is 0 at both ends, the undiscounted
    return is the number of completions for any beta. ``infos[agent]["successes"]`` always carries
    the unshaped count.

    ## Starting State
    ``t = 0``, every slot empty, nobody waiting.

    ## Episode End
    Termination: once no task can arrive any more (``t >= arrival_horizon`` in the default
    scenario) and none remains. Truncation: at ``max_steps`` (by default a bound no episode
    reaches). The last ``infos`` carry ``"metrics"`` (design §2), also available from `metrics()`.

    ## Arguments
    ``CoreEnv(config=None, *, predictor=None, render_mode=None, decisions=None, **overrides)``:
    an `EnvConfig` and/or field overrides; an optional predictor (`coreenv.predictor.Predictor`)
    that fills the estimate features; render mode ``"ansi"``, ``"rgb_array"`` or ``"human"``;
    when the nodes decide (`coreenv.Decisions`, or ``"events"``): every step (default), or at
    events of the slot table, each ``step`` call then holding the joint action until one.

    ## Version History
    * v0 (package 0.1.0): initial release. Retired in 0.2.0: making it raises, naming v1.
    * v1 (package 0.2.0): estimate features read ``NO_PREDICTOR`` (-1), not 0, when no predictor
      is attached; dynamics, rewards and metrics unchanged. The shaping potential ``Phi`` is a
      left-to-right sum over the slots, not `math.fsum` (so that `BatchedCore` adds it the same
      way): shaped rewards may differ in the last bits; with ``beta = 0`` nothing changes.
      Optional quantile columns (``estimate_quantiles``); without levels, the same observation.
      A Gymnasium vector form (`coreenv.CoreVectorEnv`). An episode's tasks are drawn at reset
      (the same tasks for a seed as before): a curve source's bad curve is reported by ``reset``,
      and an unseeded reset after an episode truncated before its last arrival continues the
      generator after all of that episode's tasks.
    """

    metadata = {
        "name": "core_v1",
        "render_modes": ["ansi", "rgb_array", "human"],
        "is_parallelizable": True,
        "render_fps": 10,
    }

    def __init__(
        self,
        config: EnvConfig | None = None,
        *,
        predictor: Predictor | None = None,
        render_mode: str | None = None,
        decisions: Decisions | str | None = None,
        **overrides: Any,
    ) -> None:
        self.config = cfg = make_config(config, **overrides)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}."
            )
        self.render_mode = render_mode
        self._core = BatchedCore(cfg, 1, predictor, make_decisions(decisions))
        self._rendering = Rendering(render_mode, cfg.num_nodes, self.render_ansi)
        if render_mode is not None:
            self._core.watch = self._rendering.watched

        m, k = cfg.num_nodes, cfg.num_slots
        self.possible_agents = [f"node_{i}" for i in range(m)]
        self.agents: list[str] = []
        self._agent_set = frozenset(self.possible_agents)
        self._observation_spaces = {a: observation_space(cfg) for a in self.possible_agents}
        self._action_spaces = {a: spaces.Discrete(k + 1) for a in self.possible_agents}
        self.state_space = state_space(cfg)
        self._chosen = np.full((1, m), k, np.int64)  # this step's actions, as the engine reads them
        self._masks = np.empty((m, k + 1), np.int8)
        self._masks_version = -1
        self.np_random: np.random.Generator | None = None
        self.np_random_seed: int | None = None
        self._shown = self._core.lanes.observe(_LANE)[0]

    # -- PettingZoo API ---------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        """The (cached) observation space of ``agent``."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        """The (cached) action space of ``agent``: ``Discrete(K + 1)``."""
        return self._action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, dict], dict[str, dict]]:
        """Start an episode.

        Without a seed, the first reset uses ``config.seed``; later ones continue the generator.
        ``options`` is accepted for API compatibility and not used:
        vary episodes through the config.
        """
        if seed is None and self.np_random is None:
            seed = self.config.seed
        if seed is not None or self.np_random is None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        known = seed if seed is not None and 0 <= seed < 2**63 else -1  # what `view` shows
        self._core.start(0, self.np_random, known)
        self._core.restart_events()
        self._masks_version = -1
        self._rendering.restart()
        self.agents = self.possible_agents[:]
        observations, *_, infos = self._answer(
            self._core.lanes.observe(_LANE)[0], 0.0, engine.RUNNING, {}
        )
        return observations, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Apply one action per node (missing nodes idle) and advance (design §2 order).

        Every step form: one step. Event form (``decisions``): the same actions again step after
        step until an event or ``hold`` steps; rewards and successes are summed, and every
        agent's info says how many steps ``elapsed``.
        """
        if not self.agents:
            raise RuntimeError("the episode is over (or never started): call reset() first.")
        if not actions.keys() <= self._agent_set:
            unknown = sorted(set(actions) - self._agent_set)
            raise ValueError(f"actions name unknown agents {unknown}; agents are {self.agents}.")
        agents, k, chosen = self.possible_agents, self.config.num_slots, self._chosen
        action_indices(actions, agents, k, chosen[0])
        played = self._core.advance(chosen, lambda: self._refuse(actions))
        successes, conflicts, ended = played.outcome[0].tolist()
        info = {"successes": successes}
        if played.elapsed is not None:
            info["elapsed"] = played.elapsed.item(0)
        answer = self._answer(played.obs[0], played.rewards.item(0), ended, info)
        infos = answer[-1]
        if conflicts:
            reasons = idle_reasons(actions, agents, k, chosen[0], played.takes[0])
            for agent, why in reasons.items():
                infos[agent]["invalid_action"] = why
        if ended:
            summary = self.metrics()
            for info in infos.values():
                info["metrics"] = summary
            self.agents = []
        return answer

    def _refuse(self, actions: dict[str, Any]) -> NoReturn:
        """Raise `InvalidActionError` naming every node whose action cannot be carried out."""
        chosen, takes = self._chosen[0], self._core.takes[0]
        reasons = idle_reasons(actions, self.possible_agents, self.config.num_slots, chosen, takes)
        text = "; ".join(f"{agent}: {why}" for agent, why in reasons.items())
        raise InvalidActionError(f"invalid actions at t={self.t}: {text}.")

    def state(self) -> np.ndarray:
        """The global view: global features and every slot block, without a node id."""
        m = self.config.num_nodes
        return self._core.lanes.observe(_LANE)[0, 0, m:]

    def render(self) -> str | np.ndarray | None:
        """Render in ``render_mode``.

        ``ansi``: the slot table; ``rgb_array``: a Gantt picture of node assignments over the last
        300 steps; ``human``: prints the table.
        """
        return self._rendering.render()

    def render_ansi(self) -> str:
        """The slot table as text, whatever the render mode (who served whom: in a render mode)."""
        served = self._rendering.served
        return ansi_table(self.view(), self.metrics(), served, self.possible_agents)

    def close(self) -> None:
        """Nothing to release."""

    def __setstate__(self, state: dict) -> None:
        """A pickled or copied environment continues exactly.

        Its running episode gets a number of its own (`SchedulerView.episode`). One pickled by
        0.1.0 is made again from its config (a mid-episode one asks for a reset).
        """
        if "_core" not in state:  # pickled by 0.1.0
            if state.get("agents"):
                warnings.warn(
                    "this CoreEnv was pickled by an older coreenv in the middle of an episode, "
                    "which cannot continue here: call reset() to start a new one.",
                    stacklevel=2,
                )
            self.__init__(
                state["config"],
                predictor=state.get("predictor"),
                render_mode=state.get("render_mode"),
            )
            return
        self.__dict__.update(state)  # its core numbers its episode anew

    # -- beyond PettingZoo ------------------------------------------------------------------------

    @property
    def predictor(self) -> Predictor | None:
        """The predictor filling the estimate features; None: they read ``NO_PREDICTOR``."""
        return self._core.predictor

    @predictor.setter
    def predictor(self, predictor: Predictor | None) -> None:
        """Attach or detach a predictor; mid-episode, the estimate features follow at once."""
        self._core.predictor = predictor

    @property
    def scenario(self) -> Scenario:
        """What draws the episodes' tasks; one set here is drawn from at the next reset."""
        return self._core.scenario

    @scenario.setter
    def scenario(self, scenario: Scenario) -> None:
        self._core.scenario = scenario
        self.agents = []

    @property
    def source(self) -> CurveSource:
        """Where the tasks' curves come from (``config.task_set``, resolved)."""
        return self._core.source

    @property
    def max_steps(self) -> int:
        """The truncation bound: ``config.max_steps``, else the scenario's bound."""
        return self._core.max_steps

    @property
    def decisions(self) -> Decisions:
        """When the nodes decide (fixed at construction): every step, or at events."""
        return self._core.decisions

    @property
    def t(self) -> int:
        """The current step."""
        return int(self._core.lanes.lane[0, engine.T])

    def metrics(self) -> dict[str, float]:
        """Design §2 metrics of the episode so far."""
        return metrics(self._core.lanes.counters(0), self.config.num_nodes)

    def slot_table(self) -> SlotTable:
        """Deprecated (removed in 0.4.0): the (K,) slot arrays of 0.1.0; read `view` instead."""
        _deprecated("slot_table()", "view()")
        return SlotTable(self._core.lanes, self.predictor is not None)

    def oracle_view(self) -> OracleView:
        """Deprecated (removed in 0.4.0): 0.1.0's truth; read ``view(clairvoyant=True)`` instead."""
        _deprecated("oracle_view()", "view(clairvoyant=True)")
        return OracleView.of(self._core.lanes)

    @property
    def slot_version(self) -> int:
        """Changes whenever a task enters or leaves a slot.

        A scheduler whose choice depends only on which tasks are present can reuse it until then.
        """
        return int(self._core.lanes.lane[0, engine.VERSION])

    def view(self, clairvoyant: bool = False) -> SchedulerView:
        """The running episode as a `SchedulerView` of one episode (what shipped schedulers read).

        ``clairvoyant`` adds the hidden truth (``remaining``): for the oracle and tests only.
        """
        if not self.agents:
            raise RuntimeError("the episode is over (or never started): call reset() first.")
        core = self._core
        shown = self._shown[None], core.lanes.mask[:, :-1].copy()
        estimates = core.predictor is not None
        return core.lanes.view(self.config, shown, core.episodes, core.seeds, estimates, clairvoyant)

    def action_masks(self) -> np.ndarray:
        """(M, K + 1) int8: every node's mask (they are identical): occupied slots and idle."""
        lanes = self._core.lanes
        version = lanes.lane.item(0, engine.VERSION)
        if self._masks_version != version:  # masks change only with the slots
            self._masks[:] = lanes.mask[0, :-1]
            self._masks_version = version
        return self._masks.copy()

    def _answer(
        self, obs: np.ndarray, reward: float, ended: int, info: dict[str, Any]
    ) -> tuple[dict, dict, dict, dict, dict]:
        """The agents' observations, rewards, terminations, truncations and infos, in one pass.

        ``obs``: the (M, D) node observations, shown: each agent's observation is its row, its
        mask a row of a fresh `action_masks`. ``ended``: the lane's `engine.ENDED`; each agent's
        info a copy of ``info``.
        """
        self._shown = obs
        masks = self.action_masks()
        terminated, truncated = ended == engine.TERMINATED, ended == engine.TRUNCATED
        observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        for i, agent in enumerate(self.agents):  # rows by index: cheaper than iterating arrays
            observations[agent] = {"observation": obs[i], "action_mask": masks[i]}
            rewards[agent], terminations[agent], truncations[agent] = reward, terminated, truncated
            infos[agent] = info.copy()
        return observations, rewards, terminations, truncations, infos


_LANE = np.zeros(1, np.int64)  # the one lane, as `Lanes.observe` takes it


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"CoreEnv.{old} is deprecated and will be removed in coreenv 0.4.0: use CoreEnv.{new}, "
        "a SchedulerView (docs/schedulers.md).",
        DeprecationWarning,
        stacklevel=3,
    )


def parallel_env(**kwargs: Any) -> CoreEnv:
    """The parallel environment.

    Keyword arguments are `EnvConfig` fields, ``config``, ``predictor``, ``render_mode`` and
    ``decisions`` (`coreenv.Decisions`: every step, or at events);
    PettingZoo's ``max_cycles`` is accepted as the truncation bound ``max_steps``.
    """
    return CoreEnv(**_with_max_cycles(kwargs))


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
