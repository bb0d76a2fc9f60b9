"""`BatchedCore`: B episodes ("lanes") of one `EnvConfig` stepped at once, as arrays.

`CoreEnv` is one lane of the same engine, so lane by lane this gives what `CoreEnv` gives for the
same seed, decision form and actions: observations, masks, rewards, successes, episode ends and
metrics. One compiled call (`engine.step`) advances every lane and observes it; Python loops over
lanes run only for rare events (a lane's episode ending, an invalid action under "raise", live
runs to train). In the event decision form a step holds each lane's action until its own event,
in one compiled call (`engine.held_step`) unless Python runs between steps (a predictor: then the
lanes still holding step on together from Python while the others wait). Each lane's
tasks are drawn when its episode starts (`EpisodeDrawer`); the lanes' state lives in `Lanes`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NoReturn

import numpy as np
from gymnasium.utils import seeding

from coreenv.checks import checked_count
from coreenv.config import EnvConfig, make_config
from coreenv.core import engine
from coreenv.episodes.drawer import EpisodeDrawer
from coreenv.core.events import DecisionEvents, Decisions, make_decisions
from coreenv.core.features import observation_size, slot_width, speed_columns
from coreenv.core.estimates import Estimates, defers_estimates
from coreenv.core.lanes import Lanes
from coreenv.masks import idle_reasons
from coreenv.core.metrics import metrics
from coreenv.shells.spaces import node_observations
from coreenv.episodes.scenarios import Scenario, make_scenario
from coreenv.core.views import SchedulerView, new_episode_id
from coreenv.curves import resolve_task_set
from coreenv.errors import ConfigError, InvalidActionError
from coreenv.predictor import Predictor
from coreenv.shells.hook import PredictorHook

__all__ = [
    "OBSERVATIONS",
    "BatchedCore",
    "BatchedObservation",
    "BatchedStep",
    "checked_lanes",
    "checked_lanes_actions",
]

_DONE = object()  # the seeds are exhausted

OBSERVATIONS = ("nodes", "state")
"""What `BatchedCore` observes: every node's (M, D) observation, or the (S,) state alone."""


@dataclass(frozen=True)
class BatchedObservation:
    """What every lane shows: its current episode's observation and mask.

    Attributes:
        obs: (B, M, D) float32; ``obs[b]`` stacks, in agent order, the ``"observation"`` arrays
            `CoreEnv` gives its nodes (one-hot node id included). An inactive lane's rows are 0.
            (B, S), the states `CoreEnv.state` gives, with ``observation="state"``.
        action_mask: (B, K + 1) int8, the mask every node of the lane shares (only idle when
            inactive).
        active: (B,) bool, whether the lane is running an episode.
        seeds: (B,) int64, the seed of each lane's current episode (-1 when inactive).
    """

    obs: np.ndarray
    action_mask: np.ndarray
    active: np.ndarray
    seeds: np.ndarray


@dataclass(frozen=True)
class BatchedStep(BatchedObservation):
    """One step of every lane.

    ``obs``, ``action_mask``, ``active`` and ``seeds`` are after auto-reset: a lane whose episode
    ended shows its next episode's first observation.

    Attributes:
        rewards: (B,) float64 team reward (what `CoreEnv.step` gives each agent); 0 if inactive.
        successes: (B,) int64 tasks completed this step (unshaped).
        terminated: (B,) bool, the episode that ran in the lane this step terminated.
        truncated: (B,) bool, it was truncated at ``max_steps``.
        final_obs: (B, M, D) (or (B, S)) the observation each ended episode ended in; elsewhere
            ``obs``'s
            rows (``final_obs is obs`` when no episode ended).
        conflicts: (B,) int64 node actions turned into idling (conflicts, empty slots, range).
        finished: ``(lane, seed, metrics)`` of each episode that ended this step, in lane order.
        elapsed: (B,) int64 steps each lane played (0 if inactive) in the event decision form;
            None in the every-step form (one step each).
    """

    rewards: np.ndarray
    successes: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_obs: np.ndarray
    conflicts: np.ndarray
    finished: list[tuple[int, int, dict[str, float]]]
    elapsed: np.ndarray | None = None


@dataclass(slots=True)
class Played:
    """What `BatchedCore.advance` played in each of B lanes (no lane restarted).

    In the every-step form ``outcome``, ``rewards`` and ``takes`` are views of the core's
    arrays, valid until its next step: the shells read them at once (no copies a step).

    Attributes:
        obs: (B, M, D) float32 (or (B, S)) each lane's observation after its last step.
        outcome: (B, 3) int64 per lane the tasks completed (summed over the steps played), the
            node actions turned into idling at the first step, and its `engine.ENDED` after its
            last step (`engine.HELD_SUCCESSES`, `HELD_CONFLICTS`, `HELD_ENDED` name the columns).
        rewards: (B,) float64 team rewards, summed.
        takes: (B, M) bool which nodes trained at the first step (`engine.claims`).
        elapsed: (B,) int64 steps each lane played in the event form; None in the every-step
            form (one step each).
    """

    obs: np.ndarray | None
    outcome: np.ndarray
    rewards: np.ndarray
    takes: np.ndarray
    elapsed: np.ndarray | None = None


class BatchedCore(PredictorHook):
    """``num_envs`` lanes of `CoreEnv` episodes of one config, stepped together, with auto-reset.

    Args:
        config: the environment settings, shared by every lane.
        num_envs: B, the number of lanes (>= 1).
        predictor: fills the estimate features, as `CoreEnv(predictor=...)`; it gets one
            batch of estimates per step for all lanes (lanes in order, then nodes in order;
            `coreenv.predictor.observed_estimates`), as `CoreEnv` asks for one per step, so its
            answer for a task must not depend on the other tasks of the call.
        decisions: when the nodes decide (`coreenv.Decisions`, a form's name or None: every
            step); in the event form rewards and successes are summed over the held steps.
        observation: one of `OBSERVATIONS`: ``"nodes"``, the (B, M, D) node observations, or
            ``"state"``, the (B, S) states alone (the node arrays are then never made; `view`
            makes them when asked).

    Supports both scenarios and every task set, ``task_set="live"`` included (its runs train
    while served, one lane after another).
    """

    def __init__(
        self,
        config: EnvConfig,
        num_envs: int,
        predictor: Predictor | None = None,
        decisions: Decisions | str | None = None,
        observation: str = "nodes",
    ) -> None:
        if observation not in OBSERVATIONS:
            raise ConfigError(
                f"BatchedCore observation must be one of {OBSERVATIONS}, got {observation!r}."
            )
        self.observation = observation
        self.config = cfg = make_config(config)
        self.num_envs = b = checked_lanes(num_envs)
        self._seeds: Iterator | Callable[[int], int] | None = None
        self.source = resolve_task_set(cfg.task_set)
        self._predictor = None
        self.scenario = make_scenario(cfg, self.source)
        self.predictor = predictor
        self.watch: Callable[[np.ndarray], None] | None = None
        """Called after every step played with the (B, M) task each node trained (-1: none)."""
        self.agents = [f"node_{i}" for i in range(cfg.num_nodes)]
        self.obs_dim = observation_size(cfg)
        self.takes = np.zeros((b, cfg.num_nodes), bool)
        self.decisions = held = make_decisions(decisions)
        self._events = DecisionEvents(
            cfg.num_nodes, slot_width(cfg), held.hold, held.feasibility, speed_columns(cfg)
        )
        self.seeds = np.full(b, -1, np.int64)  # each lane's episode's seed (-1: none)
        self.episodes = np.full(b, -1, np.int64)  # and its number (`SchedulerView.episode`)

    # -- public API -------------------------------------------------------------------------------

    def _hooked_estimates(self) -> Estimates:
        """The estimate features `predictor` fills."""
        return self.estimates

    @property
    def scenario(self) -> Scenario:
        """What draws the episodes' tasks; one set here is drawn from at the next episode."""
        return self.drawer.scenario

    @scenario.setter
    def scenario(self, scenario: Scenario) -> None:
        cfg = self.config
        self.max_steps = cfg.max_steps or scenario.step_bound()
        self.drawer = EpisodeDrawer(cfg, scenario, self.source, self.num_envs)
        self.lanes = Lanes(self.num_envs, cfg, self.drawer.arrival_end, self.max_steps)
        self.estimates = Estimates(self.lanes)
        self.estimates.attach(self._predictor is not None)

    @property
    def t(self) -> np.ndarray:
        """(B,) int64 each lane's clock (a view)."""
        return self.lanes.lane[:, engine.T]

    @property
    def active(self) -> np.ndarray:
        """(B,) bool whether each lane runs an episode."""
        return self.lanes.lane[:, engine.ACTIVE] == 1

    def reset(
        self, seeds: Iterable[int | np.random.Generator] | Callable[[int], int]
    ) -> BatchedObservation:
        """Start lanes on the first ``num_envs`` seeds; later seeds feed the auto-resets.

        Lanes left without a seed are inactive. Seeds are non-negative ints (numpy ints too);
        lane b's episode on seed s is `CoreEnv.reset(seed=s)`'s. A `numpy.random.Generator` in
        their place draws the episode from it (its seed shows as -1). ``seeds`` may instead be a
        function of the lane, called for each episode a lane starts, in lane order (a lane then
        never runs out).
        """
        self._seeds = seeds if callable(seeds) else iter(seeds)
        self._start(np.arange(self.num_envs))
        self.restart_events()
        self._shown = self._observe(), self._masks()
        return BatchedObservation(*self._shown, self.active, self.seeds.copy())

    def step(self, actions: np.ndarray, lanes: np.ndarray | None = None) -> BatchedStep:
        """Apply (B, M) integer actions (``K`` idles) and advance every active lane one step.

        Actions mean what they mean to `CoreEnv`: an empty slot, a slot an earlier node took or
        a value outside ``[0, K]`` makes the node idle, or raises `InvalidActionError` under
        ``invalid_action="raise"``. Inactive lanes' actions are ignored. ``lanes``: (B,) bool,
        which lanes step (default: all); the others wait as they are (their observation and mask
        shown again, rewards, successes and conflicts 0, not ended, 0 steps elapsed).
        """
        if self._seeds is None:
            raise RuntimeError("BatchedCore.step before reset: call reset(seeds) first.")
        chosen = self._checked_actions(actions)
        lane = self.lanes.lane
        waiting = None if lanes is None else np.flatnonzero(~lanes & self.active)
        if waiting is not None:
            lane[waiting, engine.ACTIVE] = 0
        try:
            played = self.advance(chosen, lambda: self._raise_invalid(np.asarray(actions), chosen))
        finally:
            if waiting is not None:
                lane[waiting, engine.ACTIVE] = 1
        obs, rewards = played.obs, played.rewards.copy()
        successes, conflicts, ended = played.outcome.T.copy()
        if waiting is not None and waiting.size:
            obs[waiting] = self._shown[0][waiting]
            for reported in (ended, successes, conflicts, rewards):
                reported[waiting] = 0
        terminated, truncated = ended == engine.TERMINATED, ended == engine.TRUNCATED
        final_obs = obs
        finished = []
        if ended.any():
            done = ended.nonzero()[0]
            finished = [(b, int(self.seeds[b]), self._metrics(b)) for b in done.tolist()]
            self._start(done)
            obs = obs.copy()
            obs[done] = self._observe(done)
            if self.decisions.held:
                restarted = np.ones(done.size, bool)
                self._events.due_tables(self._tables(done), restarted, done)
        self._shown = obs, self._masks()
        return BatchedStep(
            *self._shown,
            self.active,
            self.seeds.copy(),
            rewards,
            successes,
            terminated,
            truncated,
            final_obs,
            conflicts,
            finished,
            played.elapsed,
        )

    def advance(self, chosen: np.ndarray, refuse: Callable[[], NoReturn]) -> Played:
        """Play the (B, M) actions ``chosen`` (`engine.claims`' form) in every active lane.

        The orchestration of a step, which every shell plays through: claims first where
        something comes between them and the step (an invalid action to refuse: ``refuse``
        raises; live runs to train; a `watch`), the compiled step, then the predictor's
        estimates. In the event form each lane holds ``chosen`` until its event: in one compiled
        call (`engine.held_step`) unless Python runs between steps (`_hold`). Ended lanes are
        not restarted.
        """
        lanes, b = self.lanes, self.num_envs
        if not self.decisions.held:
            obs = self._step_once(chosen, refuse, defer=False)
            outcome = lanes.lane[:, engine.STEP_SUCCESSES : engine.ENDED + 1]
            return Played(obs, outcome, lanes.returns[:, engine.REWARD], self.takes)
        played = Played(
            None, np.zeros((b, 3), np.int64), np.zeros(b), self.takes, np.zeros(b, np.int64)
        )
        if self._between_steps():
            played.obs = self._hold(chosen, refuse, played)
        else:
            played.obs = self._held_step(chosen, played)
        return played

    def __setstate__(self, state: dict) -> None:
        """A pickled or copied core continues exactly.

        Its running episodes get numbers of their own (`SchedulerView.episode`).
        """
        self.__dict__.update(state)
        self.episodes = np.array([new_episode_id() if on else -1 for on in self.active], np.int64)

    def start(self, lane: int, rng: np.random.Generator, seed: int = -1) -> None:
        """Start ``lane`` on an episode drawn from ``rng``, known by ``seed`` (-1: none)."""
        self.lanes.start(lane, self.drawer.draw(lane, rng))
        self.seeds[lane], self.episodes[lane] = seed, new_episode_id()

    def restart_events(self) -> None:
        """In the event form, every lane decides at its next step (its history forgotten)."""
        if self.decisions.held:
            self._events.restart()
            self._events.due_tables(self._tables())

    def view(self, clairvoyant: bool = False) -> SchedulerView:
        """Every lane's running episode as a `SchedulerView` (E = B).

        An inactive lane's slots are empty and its observation 0. It shares ``obs`` and
        ``action_mask`` with the last `BatchedObservation` (a predictor attached since then
        shows in the estimates, not yet in ``obs``). ``clairvoyant`` adds the hidden truth: for
        the oracle and tests only.
        """
        if self._seeds is None:
            raise RuntimeError("BatchedCore.view before reset: call reset(seeds) first.")
        estimates = self.predictor is not None
        shown = self._shown
        if self.observation == "state":
            shown = node_observations(shown[0], self.active, self.config.num_nodes), shown[1]
        return self.lanes.view(
            self.config, shown, self.episodes, self.seeds, estimates, clairvoyant
        )

    def metrics(self) -> list[dict[str, float] | None]:
        """Design §2 metrics of each lane's running episode so far (None for inactive lanes)."""
        return [self._metrics(b) if on else None for b, on in enumerate(self.active.tolist())]

    def _metrics(self, lane: int) -> dict[str, float]:
        return metrics(self.lanes.counters(lane), self.config.num_nodes)

    def _step_once(
        self, chosen: np.ndarray, refuse: Callable[[], NoReturn], defer: bool
    ) -> np.ndarray:
        """One step of every active lane: its observations (`_observe`), estimates updated.

        ``defer``: put the estimates off until the lanes decide (`Estimates.defer`) instead.
        """
        lanes, takes, logs = self.lanes, self.takes, self.drawer.store.logs
        raising = self.config.invalid_action == "raise"
        claim = not (raising or self.drawer.live or self.watch is not None)
        if not claim:  # claims first: nothing may change before an error, live runs train
            engine.claims(chosen, lanes.mask, lanes.lane, takes)
            if raising and lanes.lane[:, engine.STEP_CONFLICTS].any():
                refuse()
            lanes.reveal(chosen, takes, logs)
        served = None if self.watch is None else lanes.served(chosen, takes)
        states = self.observation == "state"
        obs, ready = lanes.step(chosen, takes, claim, logs, states)
        if ready.size and self._predictor is not None:
            if defer:
                self.estimates.defer(ready)
            else:  # lanes in order, then nodes: the order of one lane after another
                self.estimates.estimate(ready, self._predictor, self.config, logs)
                obs = self._observe()
        if served is not None:
            self.watch(served)
        return obs

    def _between_steps(self) -> bool:
        """Whether Python runs between the steps of a held step.

        It does for a predictor's estimates (WLS's too), live runs to train, a `watch`, or
        invalid actions to refuse.
        """
        raising = self.config.invalid_action == "raise"
        return self._predictor is not None or raising or self.drawer.live or self.watch is not None

    def _held_step(self, chosen: np.ndarray, played: Played) -> np.ndarray:
        """The event form's step in one compiled call (`engine.held_step`): the observations.

        ``played``'s ends, successes, rewards and steps are written in place.
        """
        lanes, rule, states = self.lanes, self._events, self.observation == "state"
        obs = np.empty(lanes.state_shape if states else lanes.obs_shape, np.float32)
        engine.held_step(
            chosen, self.takes, obs, *lanes.engine_arrays(), self.drawer.store.logs,
            lanes.settings, lanes.scales, rule.last, rule.since, played.outcome,
            played.rewards, played.elapsed, rule.hold, rule.feasibility,
        )  # fmt: skip
        return obs[:, 0] if states else obs

    def _hold(
        self, chosen: np.ndarray, refuse: Callable[[], NoReturn], played: Played
    ) -> np.ndarray:
        """The event form's step with Python between steps (`_between_steps`): the observations.

        Each lane holds ``chosen`` until its event, its end or ``hold`` steps: the lanes still
        holding step together while the others are set inactive, so they wait; `engine.settle`
        counts each lane's steps into ``played``. Held steps put their estimates off until the
        lanes decide (`defers_estimates`).
        """
        lane = self.lanes.lane
        defer = defers_estimates(self.decisions, self._predictor)
        obs = self._step_once(chosen, refuse, defer)
        played.takes = self.takes.copy()
        active = np.flatnonzero(lane[:, engine.ACTIVE])
        playing = self._settle(active, played)
        holding = np.zeros(self.num_envs, bool)
        while playing.size:
            rows = playing[0] if playing.size == 1 else playing  # one lane: scalar indexing
            waiting = None
            if playing.size < active.size:  # the others wait, set inactive, while these step
                holding[:] = False
                holding[playing] = True
                waiting = active[~holding[active]]
                lane[waiting, engine.ACTIVE] = 0
            try:
                stepped = self._step_once(chosen, refuse, defer)
            finally:
                if waiting is not None:
                    lane[waiting, engine.ACTIVE] = 1
            obs[rows] = stepped[rows]
            playing = self._settle(playing, played)
        if defer:
            logs = self.drawer.store.logs
            estimated = self.estimates.estimate_deferred(self.predictor, self.config, logs)
            obs[estimated] = self._observe(estimated)
        return obs

    def _settle(self, lanes: np.ndarray, played: Played) -> np.ndarray:
        """Count the step ``lanes`` just played into ``played``: those still holding."""
        holding, rule, arrays = np.zeros(self.num_envs, bool), self._events, self.lanes
        holding[lanes] = True
        engine.settle(
            holding, arrays.lane, arrays.returns, arrays.table, rule.last, rule.since,
            played.outcome, played.rewards, played.elapsed, rule.hold, rule.feasibility,
        )  # fmt: skip
        return np.flatnonzero(holding)

    # -- actions ----------------------------------------------------------------------------------

    def _checked_actions(self, actions: np.ndarray) -> np.ndarray:
        """(B, M) int64 actions: ``K + 1`` stands for out of range."""
        b, m, k = self.num_envs, self.config.num_nodes, self.config.num_slots
        actions = checked_lanes_actions(actions, b, m, k)
        chosen = actions.astype(np.int64, copy=False)
        if chosen.view(np.uint64).max() > k:  # a negative (or wrapped uint64) one is huge here
            chosen = np.where((actions >= 0) & (actions <= k), chosen, k + 1)
        return chosen

    def _raise_invalid(self, actions: np.ndarray, chosen: np.ndarray) -> None:
        """Raise `InvalidActionError` for the first lane with invalid actions, naming its nodes."""
        lanes = np.flatnonzero(self.lanes.lane[:, engine.STEP_CONFLICTS]).tolist()
        lane, k = lanes[0], self.config.num_slots
        named = {agent: int(a) for agent, a in zip(self.agents, actions[lane])}
        why = idle_reasons(named, self.agents, k, chosen[lane], self.takes[lane])
        reasons = "; ".join(f"{agent}: {text}" for agent, text in why.items())
        others = f" (lanes {lanes[1:]} too)" if len(lanes) > 1 else ""
        raise InvalidActionError(
            f"invalid actions in lane {lane} (seed {self.seeds[lane]}) at t={self.t[lane]}: "
            f"{reasons}{others}."
        )

    # -- episodes ---------------------------------------------------------------------------------

    def _start(self, lanes: np.ndarray) -> None:
        """Start ``lanes``' next episodes from the seeds (or make them inactive), in lane order."""
        for lane in lanes.tolist():
            seed = self._seeds(lane) if callable(self._seeds) else next(self._seeds, _DONE)
            if seed is _DONE:
                self.lanes.stop(lane)
                self.seeds[lane], self.episodes[lane] = -1, -1
                continue
            if isinstance(seed, np.random.Generator):
                self.start(lane, seed)
                continue
            seed = _checked_seed(seed)
            self.start(lane, seeding.np_random(seed)[0], seed)

    # -- observations -----------------------------------------------------------------------------

    def _masks(self) -> np.ndarray:
        """(B, K + 1) int8: each lane's action mask (occupied slots, then idle)."""
        return self.lanes.mask[:, :-1].copy()

    def _tables(self, lanes: np.ndarray | None = None) -> np.ndarray:
        """(L, K, F) float32 the slot tables of ``lanes`` (default all) as observed."""
        cfg = self.config
        tables = self.lanes.table.reshape(self.num_envs, cfg.num_slots, -1)
        return (tables if lanes is None else tables[lanes]).astype(np.float32)

    def _observe(self, lanes: np.ndarray | None = None) -> np.ndarray:
        """(len(lanes), M, D) float32: what `CoreEnv` gives each lane's nodes (or (L, S) states)."""
        lanes = np.arange(self.num_envs) if lanes is None else lanes
        return self.lanes.observe(lanes, self.observation == "state")


def checked_lanes_actions(actions: object, lanes: int, nodes: int, k: int) -> np.ndarray:
    """``actions`` as a (lanes, nodes) integer array; a wrong shape or dtype is refused."""
    actions = np.asarray(actions)
    if actions.shape != (lanes, nodes):
        raise ValueError(
            f"actions must have shape (num_envs, num_nodes) = ({lanes}, {nodes}), "
            f"got {actions.shape}."
        )
    if actions.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers in [0, {k}], got dtype {actions.dtype}.")
    return actions


def checked_lanes(num_envs: object) -> int:
    """``num_envs`` as an int, refused unless it is an int >= 1 (a count of lanes)."""
    return checked_count(num_envs, "num_envs")


def _checked_seed(seed: object) -> int:
    """A seed as `CoreEnv.reset` takes it: a non-negative int (numpy integers converted)."""
    try:
        value = operator.index(seed)
    except TypeError:
        value = -1
    if isinstance(seed, bool) or value < 0:
        raise ValueError(f"seeds must be non-negative ints, got {seed!r}.")
    return value
