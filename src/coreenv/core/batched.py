"""`BatchedCore`: B episodes ("lanes") of one `EnvConfig` stepped at once, as arrays.

Lane by lane it gives, bit for bit, what `CoreEnv` gives for the same seed and the same actions:
observations, masks, rewards, successes, episode ends and metrics. The step's rules (claims,
training, expiry, arrivals, admission) run as one compiled loop over the lanes
(`engine.step_lanes`, `transition`'s order); observations, rewards and episode ends are array
operations over all lanes (Python loops over lanes run only for rare events: a lane's episode
ending or an invalid action under "raise").
Each lane's tasks are drawn when its episode starts (`EpisodeDrawer`), which gives the same tasks
because the dynamics draw nothing themselves; the lanes' state lives in `LaneSlots` and
`LaneTasks`.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from coreenv.config import EnvConfig, make_config
from coreenv.core.dynamics import terminal
from coreenv.core.engine import claims, observe, step_lanes
from coreenv.core.episodes import EpisodeDrawer, EpisodeTasks
from coreenv.core.features import GLOBAL_FEATURES, slot_width
from coreenv.core.features import potential as slot_potential
from coreenv.core.lanes import LaneSlots, LaneTasks
from coreenv.core.masks import resolve_actions
from coreenv.core.metrics import metrics
from coreenv.core.scenarios import make_scenario
from coreenv.core.state import Counters
from coreenv.core.views import SchedulerView, new_episode_id
from coreenv.curves import resolve_task_set
from coreenv.errors import InvalidActionError
from coreenv.predictor import Predictor, checked_predictor, observed_estimates

__all__ = [
    "BatchedCore",
    "BatchedObservation",
    "BatchedStep",
    "checked_lanes",
    "checked_lanes_actions",
]

# `Counters` fields counted step by step, rows of BatchedCore.counts (the others follow from the
# tasks that arrived and the clock: see BatchedCore._metrics). The first three are counted from
# slot events, adjacent so that one in-place add of a (3, B) count updates them.
_COUNTED = (
    "busy_node_steps",
    "successes",
    "failures",
    "full_queue_steps",
    "waiting_sum",
    "conflicts",
    "ready_delay_sum",
    "ready_count",
)
_BUSY, _SUCCESSES, _FAILURES, _FULL, _WAITING, _CONFLICTS, _READY_DELAY, _READY_COUNT = range(8)
_EVENTS = slice(_BUSY, _FAILURES + 1)  # rows counted from slot events each step
_DONE = object()  # the seeds are exhausted


@dataclass(frozen=True)
class BatchedObservation:
    """What every lane shows: its current episode's observation and mask.

    Attributes:
        obs: (B, M, D) float32; ``obs[b]`` stacks, in agent order, the ``"observation"`` arrays
            `CoreEnv` gives its nodes (one-hot node id included). An inactive lane's rows are 0.
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
        final_obs: (B, M, D) the observation each ended episode ended in; elsewhere ``obs``'s
            rows (``final_obs is obs`` when no episode ended).
        conflicts: (B,) int64 node actions turned into idling (conflicts, empty slots, range).
        finished: ``(lane, seed, metrics)`` of each episode that ended this step, in lane order.
        elapsed: (B,) int64 steps each lane played (the event decision form, `EnvLanes`), or
            None: one step each.
    """

    rewards: np.ndarray
    successes: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_obs: np.ndarray
    conflicts: np.ndarray
    finished: list[tuple[int, int, dict[str, float]]]
    elapsed: np.ndarray | None = None


class BatchedCore:
    """``num_envs`` lanes of `CoreEnv` episodes of one config, stepped together, with auto-reset.

    Args:
        config: the environment settings, shared by every lane.
        num_envs: B, the number of lanes (>= 1).
        predictor: fills the estimate features, as `CoreEnv(predictor=...)`; it gets one
            batch of estimates per step for all lanes (lanes in order, then nodes in order;
            `coreenv.predictor.observed_estimates`), as `CoreEnv` asks for one per step, so its
            answer for a task must not depend on the other tasks of the call.

    Supports both scenarios and every task set whose curves are whole float64 losses arrays
    (banks, ``synthetic``, user sources); ``task_set="live"`` trains its curves while tasks are
    served, and raises `ConfigError` at reset: use `CoreEnv` for it.
    """

    def __init__(
        self, config: EnvConfig, num_envs: int, predictor: Predictor | None = None
    ) -> None:
        self.config = cfg = make_config(config)
        self.num_envs = b = checked_lanes(num_envs)
        self._seeds: Iterator | Callable[[int], int] | None = None
        self.predictor = predictor
        self.source = resolve_task_set(cfg.task_set)
        self.scenario = make_scenario(cfg, self.source)
        self.max_steps = cfg.max_steps or self.scenario.step_bound()
        self.drawer = EpisodeDrawer(cfg, self.scenario, self.source, b)
        self.agents = [f"node_{i}" for i in range(cfg.num_nodes)]
        m, k = cfg.num_nodes, cfg.num_slots
        self.obs_dim = m + len(GLOBAL_FEATURES) + k * slot_width(cfg)
        self._ones = np.ones(m, np.int64)

    # -- public API -------------------------------------------------------------------------------

    @property
    def predictor(self) -> Predictor | None:
        """The predictor filling the estimate features; None: they read ``NO_PREDICTOR``."""
        return self._predictor

    @predictor.setter
    def predictor(self, predictor: Predictor | None) -> None:
        """Attach or detach a predictor; mid-episode, as `CoreEnv.predictor`'s setter does."""
        self._predictor = checked_predictor(predictor, self.config.estimate_quantiles)
        if self._seeds is not None:
            self.tasks.set_has_predictor(predictor is not None)
            self.slots.restart_estimates(self.tasks.new_estimate)

    def reset(self, seeds: Iterable[int] | Callable[[int], int]) -> BatchedObservation:
        """Start lanes on the first ``num_envs`` seeds; later seeds feed the auto-resets.

        Lanes left without a seed are inactive. Seeds are non-negative ints (numpy ints too);
        lane b's episode on seed s is `CoreEnv.reset(seed=s)`'s. ``seeds`` may instead be a
        function of the lane, called for each episode a lane starts, in lane order (a lane then
        never runs out).
        """
        b = self.num_envs
        self._seeds = seeds if callable(seeds) else iter(seeds)
        self.slots = LaneSlots(b, self.config)
        self.tasks = LaneTasks(b, slot_width(self.config), self.predictor is not None)
        self.counts = np.zeros((len(_COUNTED), b), np.int64)
        self.t = np.zeros(b, np.int64)
        self.potential = np.zeros(b)
        self.active = np.zeros(b, bool)
        self.seeds = np.full(b, -1, np.int64)
        self.episodes = np.full(b, -1, np.int64)
        self._start(np.arange(b))
        self._shown = self._observe(), self._masks()
        return BatchedObservation(*self._shown, self.active.copy(), self.seeds.copy())

    def step(self, actions: np.ndarray) -> BatchedStep:
        """Apply (B, M) integer actions (``K`` idles) and advance every active lane one step.

        Actions mean what they mean to `CoreEnv`: an empty slot, a slot an earlier node took or
        a value outside ``[0, K]`` makes the node idle, or raises `InvalidActionError` under
        ``invalid_action="raise"``. Inactive lanes' actions are ignored.
        """
        if self._seeds is None:
            raise RuntimeError("BatchedCore.step before reset: call reset(seeds) first.")
        chosen = self._checked_actions(actions)
        takes = claims(chosen, self.slots.mask)
        invalid = chosen != self.config.num_slots  # not idling, and (a taker never idles)
        invalid ^= takes  # not taking
        conflicts = np.zeros(self.num_envs, np.int64)
        if invalid.any():
            if self.config.invalid_action == "raise":
                self._raise_invalid(np.asarray(actions), invalid)
            conflicts = invalid.astype(np.int64) @ self._ones  # (B,): faster than sum(axis=1)
            self.counts[_CONFLICTS] += conflicts
        successes = self._transition(chosen, takes)
        rewards = self._rewards(successes)
        terminated, truncated = self._ends()
        obs = final_obs = self._observe()
        ended = (terminated | truncated).nonzero()[0]
        finished = []
        if ended.size:
            finished = [
                (lane, int(self.seeds[lane]), self._metrics(lane)) for lane in ended.tolist()
            ]
            self._start(ended)
            obs = obs.copy()
            obs[ended] = self._observe(ended)
        self._shown = obs, self._masks()
        return BatchedStep(
            *self._shown,
            self.active.copy(),
            self.seeds.copy(),
            rewards,
            successes,
            terminated,
            truncated,
            final_obs,
            conflicts,
            finished,
        )

    def _ends(self) -> tuple[np.ndarray, np.ndarray]:
        """(terminated, truncated) (B,): `terminal`, or ``max_steps`` reached."""
        in_system = self.slots.num_occupied + self.tasks.num_waiting
        terminated = self.active & terminal(self.t, in_system, self.drawer.arrival_end)
        truncated = self.active & ~terminated & (self.t >= self.max_steps)
        return terminated, truncated

    def __setstate__(self, state: dict) -> None:
        """A pickled or copied core continues exactly.

        Its running episodes get numbers of their own (`SchedulerView.episode`).
        """
        self.__dict__.update(state)
        if self._seeds is None:
            return
        self.episodes = np.array([new_episode_id() if on else -1 for on in self.active], np.int64)
        if "_shown" not in state:  # pickled before views existed
            self._shown = self._observe(), self._masks()

    def view(self, clairvoyant: bool = False) -> SchedulerView:
        """Every lane's running episode as a `SchedulerView` (E = B).

        An inactive lane's slots are empty and its observation 0. It shares ``obs`` and
        ``action_mask`` with the last `BatchedObservation` (a predictor attached since then
        shows in the estimates, not yet in ``obs``). ``clairvoyant`` adds the hidden truth: for
        the oracle and tests only.
        """
        if self._seeds is None:
            raise RuntimeError("BatchedCore.view before reset: call reset(seeds) first.")
        fields = self.slots.view_fields()
        remaining = None
        if clairvoyant:
            remaining = self.slots.remaining()
            uid = np.maximum(fields["uid"], 0)
            unknown = np.take_along_axis(self.tasks.feasible, uid, axis=1) < 0
            remaining[unknown & fields["occupied"]] = -1
        estimates = None
        if self.predictor is not None:
            estimates = np.stack(self.slots.estimates.reshape(2, self.num_envs, -1), axis=-1)
        obs, action_mask = self._shown
        return SchedulerView(
            configs=(self.config,) * self.num_envs,
            obs=obs,
            action_mask=action_mask,
            t=self.t.copy(),
            waiting=self.tasks.num_waiting.copy(),
            **fields,
            estimates=estimates,
            episode=self.episodes.copy(),
            seed=self.seeds.copy(),
            curves=list(self.tasks.curves),
            remaining=remaining,
        )

    def metrics(self) -> list[dict[str, float] | None]:
        """Design §2 metrics of each lane's running episode so far (None for inactive lanes)."""
        return [self._metrics(lane) if self.active[lane] else None for lane in range(self.num_envs)]

    # -- one step (design §2 order, as `transition`) ----------------------------------------------

    def _transition(self, chosen: np.ndarray, takes: np.ndarray) -> np.ndarray:
        """Advance every active lane by one step (`engine.step_lanes`); return their successes.

        Then re-estimates the trained tasks still in their slots, one predictor call for all.
        """
        cfg, slots = self.config, self.slots
        settings = (
            cfg.batches_per_step,
            cfg.min_prefix,
            slots.batch_scale,
            slots.time_scale,
            cfg.admission == "edf",
            slots.untrained_guard,
        )
        successes, ready = step_lanes(
            chosen,
            takes,
            self.active,
            self.t,
            self.counts,
            slots.arrays,
            self.tasks.arrays,
            self.drawer.store.logs,
            settings,
        )
        if self.predictor is not None and ready.size:
            self._update_estimates(ready)
        return successes

    def _update_estimates(self, ready: np.ndarray) -> None:
        """Re-estimate the tasks in flat slots ``ready``: one predictor call for all lanes.

        Lanes in order, then nodes: the order `dynamics._update_estimates` gives one env's.
        """
        slots = self.slots
        lanes = ready // self.config.num_slots
        tasks, deadlines, targets = slots.task_fields(ready)
        cursors = slots.cursor(ready)
        prefixes = [
            self.tasks.curves[lane][task][: cursor + 1]
            for lane, task, cursor in zip(lanes.tolist(), tasks.tolist(), cursors.tolist())
        ]
        budgets = self.config.batches_per_step * (deadlines - self.t[lanes])
        levels = self.config.estimate_quantiles
        estimates = observed_estimates(self.predictor, prefixes, targets, budgets, levels)
        slots.record_estimates(ready, *estimates)

    def _rewards(self, successes: np.ndarray) -> np.ndarray:
        """Team rewards: successes plus beta times the change of the potential.

        The potential is `features.potential`, as `transition`'s.
        """
        beta = self.config.shaping_beta
        if beta == 0.0:
            return successes.astype(np.float64)
        potential = slot_potential(self.slots.progress.reshape(self.num_envs, -1))
        rewards = successes + beta * (potential - self.potential)
        self.potential = potential
        return rewards

    # -- actions ----------------------------------------------------------------------------------

    def _checked_actions(self, actions: np.ndarray) -> np.ndarray:
        """(B, M) int64 actions: ``K + 1`` stands for out of range; inactive lanes idle."""
        b, m, k = self.num_envs, self.config.num_nodes, self.config.num_slots
        actions = checked_lanes_actions(actions, b, m, k)
        chosen = actions.astype(np.int64, copy=False)
        if chosen.view(np.uint64).max() > k:  # a negative (or wrapped uint64) one is huge here
            chosen = np.where((actions >= 0) & (actions <= k), chosen, k + 1)
        if not self._all_active:
            chosen = np.where(self.active[:, None], chosen, k)
        return chosen

    def _raise_invalid(self, actions: np.ndarray, invalid: np.ndarray) -> None:
        """Raise `InvalidActionError` for the first lane with invalid actions, naming its nodes."""
        lanes = np.flatnonzero(invalid.any(axis=1)).tolist()
        lane = lanes[0]
        named = {agent: int(a) for agent, a in zip(self.agents, actions[lane])}
        _, why = resolve_actions(named, self.agents, self.slots.occupied[lane])
        reasons = "; ".join(f"{agent}: {text}" for agent, text in why.items())
        others = f" (lanes {lanes[1:]} too)" if len(lanes) > 1 else ""
        raise InvalidActionError(
            f"invalid actions in lane {lane} (seed {self.seeds[lane]}) at t={self.t[lane]}: "
            f"{reasons}{others}."
        )

    # -- episodes ---------------------------------------------------------------------------------

    def _start(self, lanes: np.ndarray) -> None:
        """Start ``lanes``' next episodes from the seeds (or make them inactive), in lane order."""
        slots, k = self.slots, self.config.num_slots
        held = np.flatnonzero(slots.occupied[lanes])
        if held.size:
            slots.clear(lanes[held // k] * k + held % k)
        self.counts[:, lanes] = 0
        self.t[lanes] = 0
        self.potential[lanes] = 0.0
        for lane in lanes.tolist():
            seed = self._seeds(lane) if callable(self._seeds) else next(self._seeds, _DONE)
            if seed is _DONE:
                self.active[lane], self.seeds[lane], self.episodes[lane] = False, -1, -1
                self.tasks.load(lane, EpisodeTasks.none())
                continue
            seed = _checked_seed(seed)
            episode = self.drawer.draw(lane, seed)
            if episode.shift is not None:  # the curve store grew: every region moved
                self.tasks.shift_offsets(episode.shift)
                slots.shift_offsets(episode.shift)
            self.tasks.load(lane, episode)
            if not (episode.log_target < episode.log_initial).all():
                slots.untrained_guard = True
            self.active[lane], self.seeds[lane] = True, seed
            self.episodes[lane] = new_episode_id()
        self._all_active = bool(self.active.all())

    def _metrics(self, lane: int) -> dict[str, float]:
        """`metrics` of ``lane``'s episode: arrivals from its tasks, steps from its clock."""
        arrivals, feasible, unknown = self.tasks.arrived(lane)
        counters = Counters(
            arrivals=arrivals,
            feasible=feasible,
            unknown_demand=unknown,
            steps=int(self.t[lane]),
            **dict(zip(_COUNTED, self.counts[:, lane].tolist())),
        )
        return metrics(counters, self.config.num_nodes)

    # -- observations -----------------------------------------------------------------------------

    def _masks(self) -> np.ndarray:
        """(B, K + 1) int8: each lane's action mask (occupied slots, then idle)."""
        return self.slots.mask[:, :-1].copy()

    def _observe(self, lanes: np.ndarray | None = None) -> np.ndarray:
        """(len(lanes), M, D) float32: what `node_observations` gives each lane's nodes."""
        return observe(
            np.arange(self.num_envs) if lanes is None else lanes,
            self.t,
            self.tasks.num_waiting,
            self.slots.num_occupied,
            self.active,
            self.slots.table,
            self.config.arrival_horizon,
            self.config.num_nodes,
        )


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
    if not isinstance(num_envs, numbers.Integral) or isinstance(num_envs, bool) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}.")
    return int(num_envs)


def _checked_seed(seed: object) -> int:
    """A seed as `CoreEnv.reset` takes it: a non-negative int (numpy integers converted)."""
    try:
        value = operator.index(seed)
    except TypeError:
        value = -1
    if isinstance(seed, bool) or value < 0:
        raise ValueError(f"seeds must be non-negative ints, got {seed!r}.")
    return value
