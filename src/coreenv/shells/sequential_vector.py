"""The sequential form's Gymnasium vector env: N lanes of nodes choosing in turn, as arrays.

``gymnasium.make_vec("coreenv/CoRE-Sequential-v1", num_envs=N,
vectorization_mode="vector_entry_point")`` gives `SequentialVectorEnv`: N episodes of
`CoreSequentialEnv` over one `BatchedCore`, each lane at its own event and its own choosing node.
A lane whose last node has chosen (or whose remaining nodes have nothing to choose) plays its
joint action while the others wait; the lanes that play do so together, one compiled engine call
per round, until every lane has a real choice to make. The core observes the (N, S) states alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from coreenv.config import EnvConfig, make_config
from coreenv.core.events import Decisions, make_decisions
from coreenv.core.features import (
    OBS_BOUND,
    SlotFeature,
    slot_tables,
    slot_width,
    speed_columns,
)
from coreenv.masks import invalid_actions, live_masks
from coreenv.errors import ConfigError, InvalidActionError
from coreenv.layout import SLOT_ORDERS, listed_state, sequential_layout, slot_listing
from coreenv.predictor import Predictor
from coreenv.shells.batched import BatchedCore
from coreenv.shells.vector import LaneSeeds, lane_seeds

__all__ = ["SequentialVectorEnv"]

_OCCUPIED = int(SlotFeature.OCCUPIED)


class SequentialVectorEnv(VectorEnv):
    """N episodes of the sequential form (`CoreSequentialEnv`) as a `gymnasium.vector.VectorEnv`.

    Lane b on its j-th episode equals, call for call and bit for bit, one `CoreSequentialEnv`
    reset with seed ``first[b] + j·N`` and fed the same choices (seeds as `CoreVectorEnv`'s:
    ``reset(seed=s)`` sets ``first[b] = s + b``; a list sets them all; no seed: ``config.seed``
    the first time (random if None), else each lane's next seed).

    Observation: (N, S) float32, each lane's `CoreSequentialEnv` observation (state, taken flags,
    choosing node's one-hot; `sequential_layout`). Action: (N,) ints, each lane's choosing
    node's slot in the listed order (``K`` idles); invalid ones follow ``config.invalid_action``
    (under ``"raise"`` nothing changes before `InvalidActionError`). ``action_masks()``: (N, K + 1)
    bool live masks (sb3-contrib's MaskablePPO reads them). Reward: the team reward of the steps
    the call played (0 while a lane's step is still being chosen). Auto-reset: same step
    (``metadata["autoreset_mode"]``): an ended lane shows its next episode's first observation,
    its last one in ``infos["final_obs"]`` and its metrics in ``infos["final_info"]["metrics"]``;
    what the new episode played before its first choice is reported by its first step, as
    `CoreSequentialEnv` does (an episode with nothing to choose at all ends at that step).

    Infos, (N,) arrays: ``node`` (who chooses next in the observation shown), ``elapsed`` (steps
    the call played in the episode that ran), ``successes``, ``invalid_actions`` (node choices
    turned into idling; `CoreSequentialEnv` names them), ``reset_elapsed`` (steps a newly started
    episode played before its first choice; `CoreSequentialEnv.reset`'s ``elapsed``) and
    ``episode_seed`` (the seed of the episode shown).

    Args:
        num_envs: N.
        config: the environment settings (`EnvConfig`); ``overrides`` are fields on top.
        slot_order: one of `SLOT_ORDERS`: how observations, masks and actions list the slots.
        predictor: fills the estimate features; one call per round for the lanes that play.
        decisions: when the joint action is played (`coreenv.Decisions`): every step (default),
            or held until an event.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        config: EnvConfig | None = None,
        *,
        slot_order: str = "table",
        predictor: Predictor | None = None,
        decisions: Decisions | str | None = None,
        **overrides: Any,
    ) -> None:
        if slot_order not in SLOT_ORDERS:
            raise ConfigError(
                f"SequentialVectorEnv slot_order must be one of {SLOT_ORDERS}, got {slot_order!r}."
            )
        self.slot_order = slot_order
        self.config = cfg = make_config(config, **overrides)
        self.decisions = make_decisions(decisions)
        self.core = BatchedCore(cfg, num_envs, predictor, self.decisions, observation="state")
        self.num_envs = n = self.core.num_envs
        m, k = cfg.num_nodes, cfg.num_slots
        self._taken_at, self._node_at, size = sequential_layout(cfg)
        self.single_observation_space = spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32)
        self.single_action_space = spaces.Discrete(k + 1)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.render_mode = None
        self.seeds: LaneSeeds | None = None
        self._chosen = np.full((n, m), k, np.int64)  # this step's choices, as the engine reads them
        self._node = np.zeros(n, np.int64)  # how many of each lane's nodes have chosen
        self._pending = _Totals(n)  # what each lane's episode played before its first choice
        self._ended: dict[int, _Ended] = {}  # episodes that ended before their first choice
        self.finished: dict[int, _Ended] = {}
        """The episodes the last call ended, by lane (what `CoreSequentialEnv` reports)."""
        self._states = np.zeros((n, size - k - m), np.float32)  # (N, S) the core's states
        self._masks = np.zeros((n, k + 1), np.int8)  # (N, K + 1) the core's step masks
        self._live: np.ndarray | None = None  # (N, K + 1) the live masks shown, listed
        self._choice = live_masks(self._masks, self._chosen, self._node)  # in the table's order
        self.listing = np.broadcast_to(np.arange(k), (n, k))
        """(N, K) the slot each listed position of the last observation shows."""

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every lane's next episode and play each on to its first real choice."""
        self.seeds = lane_seeds(seed, self.num_envs, self.config, self.seeds)
        return self.start(self.seeds)

    def start(
        self, seeds: Iterable[int | np.random.Generator] | Callable[[int], int]
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """`reset` from ``seeds`` as `BatchedCore.reset` takes them: a lane they leave stops.

        `CoreSequentialEnv` starts its one lane from its generator this way, with no next one.
        """
        start = self.core.reset(seeds)
        self._states, self._masks = start.obs, start.action_mask
        self._chosen[:] = self.config.num_slots
        self._node[:] = 0
        self._ended = {}
        played = self._play(np.ones(self.num_envs, np.int8), _Totals(self.num_envs))
        self._pending = played.started
        obs = self._observe()
        infos = {
            "node": self._node.copy(),
            "elapsed": played.started.elapsed.copy(),
            "episode_seed": self._episode_seeds(),
        }
        return obs, infos

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Each lane's choosing node's slot; lanes whose joint action is complete play it."""
        if self._live is None:
            raise RuntimeError("SequentialVectorEnv.step before reset: call reset() first.")
        actions = self._checked_actions(actions)
        reported, self._ended = self._ended, {}
        choosing = np.ones(self.num_envs, bool)
        choosing[list(reported)] = False  # their episode is over: the call reports its end
        slots = self._slots(actions)
        if self.config.invalid_action == "raise":
            self._check(slots, actions, choosing)
        lanes = np.flatnonzero(choosing)
        self._chosen[lanes, self._node[lanes]] = slots[lanes]
        self._node[lanes] += 1
        played = self._play(np.where(choosing, 0, 1).astype(np.int8), self._pending)
        totals = played.current
        self._pending = played.started
        terminated, truncated = played.terminated, played.truncated
        for lane, ended in reported.items():
            terminated[lane], truncated[lane] = ended.terminated, ended.truncated
            played.finished[lane] = ended
        self.finished = played.finished
        stopped = {lane: e for lane, e in played.finished.items() if not self.core.active[lane]}
        infos: dict[str, Any] = {
            "node": self._node.copy(),
            "elapsed": totals.elapsed,
            "successes": totals.successes,
            "invalid_actions": totals.conflicts,
            "reset_elapsed": played.started.elapsed.copy(),
            "episode_seed": self._episode_seeds(),
        }
        for lane in sorted(played.finished):
            ended = played.finished[lane]
            info = {"final_obs": ended.obs, "final_info": {"metrics": ended.metrics}}
            infos = self._add_info(infos, info, lane)
        return self._observe(stopped), totals.reward, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """(N, K + 1) bool: each lane's choosing node's live mask, its slots in the listed order."""
        if self._live is None:
            raise RuntimeError("SequentialVectorEnv.action_masks before reset: call reset() first.")
        return self._live.copy()

    def turns(self) -> np.ndarray:
        """(N,) the node of each lane that chooses next (how many of its nodes have chosen)."""
        return self._node.copy()

    def step_masks(self) -> np.ndarray:
        """(N, K + 1) int8: each lane's step mask, the slot table's (occupied slots, then idle)."""
        return self._masks.copy()

    def metrics(self) -> list[dict[str, float] | None]:
        """Design §2 metrics of the episode each lane's engine runs so far (`BatchedCore`)."""
        return self.core.metrics()

    # -- choices ----------------------------------------------------------------------------------

    def _checked_actions(self, actions: Any) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(
                f"actions must have shape (num_envs,) = ({self.num_envs},), got {actions.shape}."
            )
        if actions.dtype.kind not in "iu":
            k = self.config.num_slots
            raise ValueError(f"actions must be integers in [0, {k}], got dtype {actions.dtype}.")
        return actions

    def _slots(self, actions: np.ndarray) -> np.ndarray:
        """(N,) the table slot of each listed position (``K`` idles, ``K + 1``: out of range)."""
        k = self.config.num_slots
        inside = (actions >= 0) & (actions <= k)
        slots = np.where(inside, actions, k + 1).astype(np.int64)
        if self.slot_order != "table":
            listed = slots < k
            rows = np.flatnonzero(listed)
            slots[rows] = self.listing[rows, slots[rows]]
        return slots

    def _check(self, slots: np.ndarray, actions: np.ndarray, choosing: np.ndarray) -> None:
        """Under ``invalid_action="raise"``, refuse the first lane's choice its node cannot make.

        The rule is the live mask's (`live_masks`), the parallel env's reasons name the fault.
        """
        k = self.config.num_slots
        live, _ = self._choice
        allowed = np.take_along_axis(live, np.minimum(slots, k)[:, None], axis=1)[:, 0] == 1
        bad = np.flatnonzero(choosing & ((slots > k) | ~allowed))
        if not bad.size:
            return
        lane = int(bad[0])
        node = int(self._node[lane])
        agents = [f"node_{i}" for i in range(node + 1)]
        action = int(slots[lane]) if slots[lane] <= k else int(actions[lane])
        chosen = dict(zip(agents, [*self._chosen[lane, :node].tolist(), action]))
        why = invalid_actions(chosen, agents, self._masks[lane])[agents[-1]]
        raise InvalidActionError(
            f"invalid action in lane {lane} (seed {self._episode_seeds()[lane]}) at "
            f"t={self.core.t[lane]}: {agents[-1]}: {why}."
        )

    # -- playing ----------------------------------------------------------------------------------

    def _play(self, phase: np.ndarray, pending: _Totals) -> _Played:
        """Play the lanes' complete joint actions, round after round, until each has a choice.

        ``phase`` (N,) int8 per lane: 0 while it plays the episode the call began with, 1 once
        it plays an episode started in this call (before its first choice), 2 once that one
        ended too (it waits for the next call to report the end). Nodes with nothing left to
        choose idle without being asked, as `CoreSequentialEnv` lets them. The rewards are
        summed in `CoreSequentialEnv`'s order: what ``pending`` holds (the lanes' episode before
        their first choice) plus the joint action the call's choice completed, plus the sum of
        the steps played after it.
        """
        n, m, k = self.num_envs, self.config.num_nodes, self.config.num_slots
        played = _Played(n, pending)
        completed = (phase == 0) & (self._node == m)  # by this call's choice
        after = _Totals(n)  # the steps played after that, in the episode the call began with
        while True:
            self._choice = live_masks(self._masks, self._chosen, self._node)
            going = (phase < 2) & self.core.active  # a lane without a next episode stops
            stuck = going & (self._node < m) & ~self._choice[0][:, :k].any(axis=1)
            self._node[stuck] = m  # the rest idle: their entries already read K
            playing = going & (self._node == m)
            if not playing.any():  # the live masks of every lane's choosing node are current
                played.current.add(after)
                return played
            step = self.core.step(self._chosen, playing)
            self._states, self._masks = step.obs, step.action_mask
            elapsed = playing.astype(np.int64) if step.elapsed is None else step.elapsed
            groups = (
                (played.current, completed),
                (after, (phase == 0) & ~completed),
                (played.started, phase == 1),
            )
            for totals, lanes in groups:
                totals.add_step(step.rewards, step.successes, elapsed, step.conflicts, lanes)
            completed = np.zeros(n, bool)
            self._chosen[playing] = k
            self._node[playing] = 0
            for lane, seed, metrics in step.finished:
                ended = self._ended_in(step.final_obs[lane], seed, metrics)
                ended.terminated = bool(step.terminated[lane])
                ended.truncated = bool(step.truncated[lane])
                if phase[lane] == 0:
                    played.finished[lane] = ended
                    played.terminated[lane] = ended.terminated
                    played.truncated[lane] = ended.truncated
                else:
                    self._ended[lane] = ended
                phase[lane] += 1

    # -- observations -----------------------------------------------------------------------------

    def _observe(self, stopped: dict[int, _Ended] | None = None) -> np.ndarray:
        """(N, S) the observations shown (and the live masks and listing behind them).

        A lane whose episode ended shows it (``stopped``: those with no next episode).
        """
        obs, self._live, self.listing = self._shown(self._states, self._node, self._choice)
        for lane, ended in {**self._ended, **(stopped or {})}.items():
            obs[lane], self._live[lane], self.listing[lane] = ended.obs, ended.live, ended.listing
        return obs

    def _shown(
        self, states: np.ndarray, node: np.ndarray, choice: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(L, S) observations, (L, K + 1) listed live masks and (L, K) listings of L lanes.

        ``states``: (L, S); ``node``: (L,) the choosing nodes; ``choice``: their `live_masks`.
        """
        cfg, k = self.config, self.config.num_slots
        live, taken = choice
        live = live.astype(bool)
        listing = slot_listing(states, cfg, self.slot_order)
        obs = np.zeros((len(states), self.single_observation_space.shape[0]), np.float32)
        if self.slot_order == "table":
            obs[:, : self._taken_at] = states
            obs[:, self._taken_at : self._node_at] = taken
        else:
            obs[:, : self._taken_at] = listed_state(states, listing, cfg)
            obs[:, self._taken_at : self._node_at] = np.take_along_axis(taken, listing, axis=1)
            live[:, :k] = np.take_along_axis(live[:, :k], listing, axis=1)
        obs[np.arange(len(states)), self._node_at + node] = 1.0
        return obs, live, np.array(listing)

    def _ended_in(self, state: np.ndarray, seed: int, metrics: dict[str, float]) -> _Ended:
        """An episode ended in (S,) ``state``: shown with no choice made and node 0 next.

        Its step mask is its state's occupied slots, then idle.
        """
        cfg, k, m = self.config, self.config.num_slots, self.config.num_nodes
        occupied = slot_tables(state[None, None], 0, slot_width(cfg), speed_columns(cfg))[0, :, _OCCUPIED] > 0  # (K,)
        mask = np.append(occupied, True).astype(np.int8)
        node = np.zeros(1, np.int64)
        obs, live, listing = self._shown(
            state[None], node, live_masks(mask[None], np.full((1, m), k), node)
        )
        return _Ended(obs[0], live[0], listing[0], seed, metrics)

    def _episode_seeds(self) -> np.ndarray:
        """(N,) the seed of the episode each lane shows."""
        seeds = self.core.seeds.copy()
        for lane, ended in self._ended.items():
            seeds[lane] = ended.seed
        return seeds


class _Totals:
    """What the steps a call played gave each of N lanes, summed."""

    def __init__(self, n: int) -> None:
        self.reward = np.zeros(n)
        self.successes = np.zeros(n, np.int64)
        self.elapsed = np.zeros(n, np.int64)
        self.conflicts = np.zeros(n, np.int64)

    def add_step(
        self,
        rewards: np.ndarray,
        successes: np.ndarray,
        elapsed: np.ndarray,
        conflicts: np.ndarray,
        lanes: np.ndarray,
    ) -> None:
        """Add one round's (N,) results to ``lanes`` (a (N,) bool mask)."""
        self.reward[lanes] += rewards[lanes]
        self.successes[lanes] += successes[lanes]
        self.elapsed[lanes] += elapsed[lanes]
        self.conflicts[lanes] += conflicts[lanes]

    def add(self, later: _Totals) -> None:
        """Add what later steps gave."""
        self.reward += later.reward
        self.successes += later.successes
        self.elapsed += later.elapsed
        self.conflicts += later.conflicts

    def copy(self) -> _Totals:
        """The same totals, in new arrays."""
        totals = _Totals(0)
        totals.reward, totals.successes = self.reward.copy(), self.successes.copy()
        totals.elapsed, totals.conflicts = self.elapsed.copy(), self.conflicts.copy()
        return totals


@dataclass
class _Ended:
    """An episode that ended: what it shows, its seed, its metrics and how it ended.

    It shows an observation, a listed live mask and a listing (`SequentialVectorEnv.listing`).
    """

    obs: np.ndarray
    live: np.ndarray
    listing: np.ndarray
    seed: int
    metrics: dict[str, float]
    terminated: bool = False
    truncated: bool = False


class _Played:
    """What one call's rounds played: in the episodes it began with, and in those it started.

    The first start from ``pending``: what they played before their first choice.
    """

    def __init__(self, n: int, pending: _Totals) -> None:
        self.current, self.started = pending.copy(), _Totals(n)
        self.current.elapsed[:] = 0  # those steps were counted when they were played
        self.terminated = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.finished: dict[int, _Ended] = {}
