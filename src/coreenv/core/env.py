"""`CoreEnv`: the CoRE-Learning PettingZoo `ParallelEnv`, a thin shell over the simulator core."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from coreenv.config import EnvConfig, make_config
from coreenv.core.dynamics import terminal, transition
from coreenv.core.events import DecisionEvents, Decisions, make_decisions
from coreenv.core.features import slot_width
from coreenv.core.legacy import OracleView, SlotTable
from coreenv.core.masks import resolve_actions
from coreenv.core.metrics import metrics
from coreenv.core.observation import node_observations, observation_space, state_space, state_vector
from coreenv.core.render import ansi_table, gantt
from coreenv.core.scenarios import SCENARIOS, make_scenario
from coreenv.core.state import State, initial
from coreenv.core.tasks import TaskDraw
from coreenv.core.views import SchedulerView, new_episode_id
from coreenv.curves import resolve_task_set
from coreenv.errors import InvalidActionError
from coreenv.predictor import Predictor, checked_predictor

__all__ = ["CoreEnv"]


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
        self.config = make_config(config, **overrides)
        self._decisions = make_decisions(decisions)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}."
            )
        self.render_mode = render_mode
        self._state: State | None = None
        self.predictor = predictor
        self.source = resolve_task_set(self.config.task_set)
        self.scenario = make_scenario(self.config, self.source)
        self.max_steps = self.config.max_steps or self.scenario.step_bound()

        m, k = self.config.num_nodes, self.config.num_slots
        self.possible_agents = [f"node_{i}" for i in range(m)]
        self.agents: list[str] = []
        self._agent_set = frozenset(self.possible_agents)
        self._observation_spaces = {a: observation_space(self.config) for a in self.possible_agents}
        self._action_spaces = {a: spaces.Discrete(k + 1) for a in self.possible_agents}
        self.state_space = state_space(self.config)
        self._obs_template = np.zeros((m, m + self.state_space.shape[0]), np.float32)
        self._obs_template[:, :m] = np.eye(m)
        self._masks = np.empty((m, k + 1), np.int8)
        self._masks_version = -1
        self._events = DecisionEvents(
            m, slot_width(self.config), self._decisions.hold, self._decisions.feasibility
        )
        self.np_random: np.random.Generator | None = None
        self.np_random_seed: int | None = None
        self._state = self._initial_state()
        self._history: list[np.ndarray] = []

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
        self._arrivals: dict[int, list[TaskDraw]] = {}
        for t, draw in self.scenario.draw_episode(self.np_random):
            self._arrivals.setdefault(t, []).append(draw)
        self._arrival_end = self.scenario.arrival_end()
        self._state = self._initial_state()
        self._masks_version = -1
        self._history = []
        self._episode, self._seed = new_episode_id(), seed
        self.agents = self.possible_agents[:]
        if self.decisions.held:
            self._events.restart()
            self._events.due_tables(self._state.table[None])
        return self._observations(), {agent: {} for agent in self.agents}

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
        state, held = self._state, self.decisions.held
        reward, successes, elapsed = 0.0, 0, 0
        while True:
            slots, invalid = resolve_actions(actions, self.possible_agents, state.filled)
            if invalid and self.config.invalid_action == "raise":
                reasons = "; ".join(f"{agent}: {why}" for agent, why in invalid.items())
                raise InvalidActionError(f"invalid actions at t={state.t}: {reasons}.")
            if not elapsed:
                first_invalid = invalid
            arrivals = self._arrivals.pop(state.t, ())
            step = transition(state, slots, self.config, arrivals, self.predictor, len(invalid))
            reward += step.reward
            successes += step.successes
            elapsed += 1
            terminated = terminal(state.t, state.in_system(), self._arrival_end)
            truncated = not terminated and state.t >= self.max_steps
            if self.render_mode is not None:
                self._history.append(np.array(state.served))
                if self.render_mode == "human":
                    print(self.render_ansi(), end="\n\n")
            if not held or terminated or truncated or self._events.due_tables(state.table[None])[0]:
                break

        agents = self.agents
        observations = self._observations()
        infos = {agent: {"successes": successes} for agent in agents}
        if held:
            for info in infos.values():
                info["elapsed"] = elapsed
        for agent, why in first_invalid.items():
            infos[agent]["invalid_action"] = why
        if terminated or truncated:
            summary = self.metrics()
            for info in infos.values():
                info["metrics"] = summary
            self.agents = []
        return (
            observations,
            dict.fromkeys(agents, reward),
            dict.fromkeys(agents, terminated),
            dict.fromkeys(agents, truncated),
            infos,
        )

    def state(self) -> np.ndarray:
        """The global view: global features and every slot block, without a node id."""
        return state_vector(self._state, self.config)

    def render(self) -> str | np.ndarray | None:
        """Render in ``render_mode``.

        ``ansi``: the slot table; ``rgb_array``: a Gantt picture of node assignments over the last
        300 steps; ``human``: prints the table.
        """
        if self.render_mode == "ansi":
            return self.render_ansi()
        if self.render_mode == "rgb_array":
            return gantt(self._history, self.config.num_nodes)
        if self.render_mode == "human":
            print(self.render_ansi())
        return None

    def render_ansi(self) -> str:
        """The slot table as text, whatever the render mode."""
        return ansi_table(self._state, self.config, self.possible_agents)

    def close(self) -> None:
        """Nothing to release."""

    def __setstate__(self, state: dict) -> None:
        """A pickled or copied environment continues exactly.

        Its running episode gets a number of its own (`SchedulerView.episode`). One pickled by
        0.1.0 gets 0.2.0's form of its built-in scenario, and in the middle of an episode asks
        for a reset (its tasks were drawn step by step).
        """
        if "_arrivals" not in state:  # pickled by 0.1.0
            state["_predictor"] = state.pop("predictor", None)
            state.pop("_slot_table", None)
            if type(state["scenario"]) in SCENARIOS.values():
                state["scenario"] = make_scenario(state["config"], state["source"])
            if state.get("agents"):
                warnings.warn(
                    "this CoreEnv was pickled by an older coreenv in the middle of an episode, "
                    "which cannot continue here: call reset() to start a new one.",
                    stacklevel=2,
                )
                state["agents"] = []
        if "_decisions" not in state:  # pickled before the event form: decisions every step
            state["_decisions"] = Decisions()
            m, width = state["config"].num_nodes, slot_width(state["config"])
            state["_events"] = DecisionEvents(m, width, 1, False)
        self.__dict__.update(state)
        self._episode = new_episode_id()

    # -- beyond PettingZoo ------------------------------------------------------------------------

    @property
    def predictor(self) -> Predictor | None:
        """The predictor filling the estimate features; None: they read ``NO_PREDICTOR``."""
        return self._predictor

    @predictor.setter
    def predictor(self, predictor: Predictor | None) -> None:
        """Attach or detach a predictor; mid-episode, the estimate features follow at once."""
        self._predictor = checked_predictor(predictor, self.config.estimate_quantiles)
        if self._state is not None:
            self._state.set_has_predictor(predictor is not None)

    @property
    def decisions(self) -> Decisions:
        """When the nodes decide (fixed at construction): every step, or at events."""
        return self._decisions

    @property
    def t(self) -> int:
        """The current step."""
        return self._state.t

    def metrics(self) -> dict[str, float]:
        """Design §2 metrics of the episode so far."""
        return metrics(self._state.counters, self.config.num_nodes)

    def slot_table(self) -> SlotTable:
        """Deprecated (removed in 0.3.0): the (K,) slot arrays of 0.1.0; read `view` instead."""
        _deprecated("slot_table()", "view()")
        return SlotTable(self._state)

    def oracle_view(self) -> OracleView:
        """Deprecated (removed in 0.3.0): 0.1.0's truth; read ``view(clairvoyant=True)`` instead."""
        _deprecated("oracle_view()", "view(clairvoyant=True)")
        return OracleView.of(self._state)

    @property
    def slot_version(self) -> int:
        """Changes whenever a task enters or leaves a slot.

        A scheduler whose choice depends only on which tasks are present can reuse it until then.
        """
        return self._state.version

    def view(self, clairvoyant: bool = False) -> SchedulerView:
        """The running episode as a `SchedulerView` of one episode (what shipped schedulers read).

        ``clairvoyant`` adds the hidden truth (``remaining``): for the oracle and tests only.
        """
        if not self.agents:
            raise RuntimeError("the episode is over (or never started): call reset() first.")
        state, seed = self._state, self._seed
        remaining = None
        if clairvoyant:  # an unknowable demand (live curves) shows as -1
            left = [
                0 if task is None else -1 if task.demand is None else task.demand - n
                for task, n in zip(state.tasks, state.cursor)
            ]
            remaining = np.array([left], np.int64)
        estimates = None
        if state.has_predictor:
            estimates = np.stack((state.est_remaining, state.est_p_success), axis=-1)[None]
        return SchedulerView(
            configs=(self.config,),
            obs=self._shown[None],
            action_mask=state.mask[None].copy(),
            t=np.array([state.t], np.int64),
            waiting=np.array([len(state.waiting)], np.int64),
            occupied=state.occupied[None].copy(),
            uid=state.uid[None].copy(),
            arrival=state.arrival[None].copy(),
            deadline=state.deadline[None].copy(),
            batches=np.array([state.cursor], np.int64),
            target=state.target[None].copy(),
            estimates=estimates,
            episode=np.array([self._episode], np.int64),
            seed=np.array([seed if seed is not None and 0 <= seed < 2**63 else -1], np.int64),
            curves=[{task.uid: task.curve.losses for task in state.tasks if task is not None}],
            remaining=remaining,
        )

    def action_masks(self) -> np.ndarray:
        """(M, K + 1) int8: every node's mask (they are identical): occupied slots and idle."""
        if self._masks_version != self._state.version:  # masks change only with the slots
            self._masks[:] = self._state.mask
            self._masks_version = self._state.version
        return self._masks.copy()

    def _initial_state(self) -> State:
        return initial(self.config, has_predictor=self.predictor is not None)

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        obs = self._shown = node_observations(self._state, self.config, self._obs_template)
        masks = self.action_masks()
        return {
            agent: {"observation": o, "action_mask": mask}
            for agent, o, mask in zip(self.agents, obs, masks)
        }


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"CoreEnv.{old} is deprecated and will be removed in coreenv 0.3.0: use CoreEnv.{new}, "
        "a SchedulerView (docs/schedulers.md).",
        DeprecationWarning,
        stacklevel=3,
    )
