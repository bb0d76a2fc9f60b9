"""One node's choice per step: a Gymnasium form of `CoreEnv` whose joint actions are matchings.

A single-agent learner picks the nodes' slots one after another. Each pick is masked by the
rule of the AEC form (`coreenv.masks.live_mask`: a slot an earlier node took this step is
not allowed), and the observation says which slots are taken and which node is choosing, so a
policy over ``Discrete(K + 1)`` expresses any matching and nothing else (docs/rl.md).

Slots are listed as the slot table holds them (``slot_order="table"``) or by deadline
(``"deadline"``: occupied slots soonest deadline first, then the empty ones), so that a position
in the observation means the same thing from step to step (`slot_listing`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from coreenv.config import EnvConfig
from coreenv.core.features import OBS_BOUND
from coreenv.masks import invalid_actions, live_mask
from coreenv.errors import ConfigError, InvalidActionError
from coreenv.layout import SLOT_ORDERS, listed_state, sequential_layout, slot_listing
from coreenv.shells.parallel import CoreEnv

__all__ = ["CoreSequentialEnv"]


class CoreSequentialEnv(gym.Env):
    """``gymnasium.make("coreenv/CoRE-Sequential-v1", **overrides)``: nodes choose in turn.

    Observation: `CoreEnv.state()`, then K taken flags (slots chosen by the nodes before this
    one in the same step), then the choosing node's one-hot id (`sequential_layout`). Action:
    ``Discrete(K + 1)``, the choosing node's slot (``K`` idles); ``action_masks()`` is its live
    mask. A node with nothing left to choose (only idling allowed) idles without being asked.
    Once every node has chosen, the joint action is played (in ``decisions``' form: every step,
    or held until an event). Reward: the team reward of the steps played by this call (0 while
    the step's choices are still being made). Info: ``node`` (who chooses next), ``elapsed``
    (environment steps played), ``successes``, ``invalid_actions`` and, at the end, ``metrics``.
    With ``slot_order="deadline"`` the slot blocks, taken flags, mask and actions follow the
    listing by deadline (`slot_listing`); ``listing`` says which slot each position shows.

    Args:
        config: the environment settings (`EnvConfig`).
        slot_order: one of `SLOT_ORDERS`: how the observation lists the slots.
        options: `CoreEnv`'s keyword arguments (``predictor``, ``render_mode``, ``decisions`` and
            `EnvConfig` fields), handed to the `CoreEnv` it wraps (``self.env``).
    """

    metadata = CoreEnv.metadata

    def __init__(
        self, config: EnvConfig | None = None, *, slot_order: str = "table", **options: Any
    ) -> None:
        if slot_order not in SLOT_ORDERS:
            raise ConfigError(
                f"CoreSequentialEnv slot_order must be one of {SLOT_ORDERS}, got {slot_order!r}."
            )
        self.slot_order = slot_order
        self.env = CoreEnv(config, **options)
        self.config = cfg = self.env.config
        self.render_mode = self.env.render_mode
        self._taken_at, self._node_at, size = sequential_layout(cfg)
        self.observation_space = spaces.Box(-OBS_BOUND, OBS_BOUND, (size,), np.float32)
        self.action_space = spaces.Discrete(cfg.num_slots + 1)
        self._chosen: list[Any] = []
        self._pending: _Played | None = None  # what reset played, reported by the first step
        self.listing = np.arange(cfg.num_slots)
        """(K,) the slot each listed position of the last observation shows."""

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """Start an episode (seeding as `CoreEnv.reset`) and play on to the first real choice.

        Until a task enters a slot there is nothing to choose; ``elapsed`` counts those steps,
        and the first `step` reports what they gave (an episode with nothing to choose at all
        ends there).
        """
        super().reset(seed=seed)
        self.env.reset(seed=seed, options=options)
        self._chosen = []
        played = self._advance()
        self._pending = dataclasses.replace(played, elapsed=0)
        return self._observation(), {"node": len(self._chosen), "elapsed": played.elapsed}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """The choosing node's slot; plays the joint action once every node has chosen."""
        if not self.env.agents and self._pending is None:
            raise RuntimeError("the episode is over (or never started): call reset() first.")
        if self.env.agents:
            self._check(self._slot(action))  # before anything changes: may be chosen again
        played, self._pending = self._pending, None
        if self.env.agents:
            self._chosen.append(self._slot(action))
            played = played or _Played()
            if len(self._chosen) == self.config.num_nodes:
                played.add(self._play())
            played.add(self._advance())
        info = {
            "node": len(self._chosen),
            "elapsed": played.elapsed,
            "successes": played.successes,
            "invalid_actions": played.invalid,
        }
        if played.metrics is not None:
            info["metrics"] = played.metrics
        return self._observation(), played.reward, played.terminated, played.truncated, info

    def action_masks(self) -> np.ndarray:
        """(K + 1,) bool: the choosing node's live mask, its slots in the listed order."""
        live = self._live()[0].astype(bool)
        live[:-1] = live[:-1][self.listing]
        return live

    def render(self) -> str | np.ndarray | None:
        """As `CoreEnv.render`."""
        return self.env.render()

    def close(self) -> None:
        """Nothing to release."""
        self.env.close()

    def _check(self, action: Any) -> None:
        """Under ``invalid_action="raise"``, refuse a choice the node cannot carry out, at once.

        The rule is the parallel env's (`invalid_actions`); raising before the choice is kept
        leaves the step's earlier choices as they were, so the caller may choose again.
        """
        if self.config.invalid_action != "raise":
            return
        agents = self.env.possible_agents[: len(self._chosen) + 1]
        actions = dict(zip(agents, [*self._chosen, action]))
        invalid = invalid_actions(actions, agents, self.env.action_masks()[0])
        if agents[-1] in invalid:
            raise InvalidActionError(
                f"invalid action at t={self.env.t}: {agents[-1]}: {invalid[agents[-1]]}."
            )

    def _slot(self, action: Any) -> Any:
        """The table slot of a listed position; anything else as it is (the env judges it)."""
        k = self.config.num_slots
        if self.slot_order != "table" and isinstance(action, (int, np.integer)) and 0 <= action < k:
            return int(self.listing[action])
        return action

    def _live(self) -> tuple[np.ndarray, np.ndarray]:
        return live_mask(self.env.action_masks()[0], self._chosen)

    def _advance(self) -> _Played:
        """Let nodes with nothing to choose idle, playing steps, until a real choice or the end."""
        played, idle = _Played(), self.config.num_slots
        while self.env.agents and not self._live()[0][:idle].any():
            self._chosen.append(idle)
            if len(self._chosen) == self.config.num_nodes:
                played.add(self._play())
        return played

    def _play(self) -> _Played:
        """Play the joint action of the chosen slots; the next step's choices start afresh."""
        env = self.env
        first = env.possible_agents[0]
        _, rewards, terminations, truncations, infos = env.step(
            dict(zip(env.possible_agents, self._chosen))
        )
        self._chosen = []
        info = infos[first]
        invalid = {a: i["invalid_action"] for a, i in infos.items() if "invalid_action" in i}
        return _Played(
            rewards[first],
            info["successes"],
            info.get("elapsed", 1),
            invalid,
            terminations[first],
            truncations[first],
            info.get("metrics"),
        )

    def _observation(self) -> np.ndarray:
        obs = np.zeros(self.observation_space.shape, np.float32)
        state = self.env.state()
        if self.slot_order != "table":
            self.listing = slot_listing(state, self.config, self.slot_order)
            state = listed_state(state, self.listing, self.config)
        obs[: self._taken_at] = state
        obs[self._taken_at : self._node_at] = self._live()[1][self.listing]
        if len(self._chosen) < self.config.num_nodes:
            obs[self._node_at + len(self._chosen)] = 1.0
        return obs


@dataclass
class _Played:
    """What the steps played by one call gave: summed rewards, counts, how the episode stands."""

    reward: float = 0.0
    successes: int = 0
    elapsed: int = 0
    invalid: dict = field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    metrics: dict | None = None

    def add(self, other: _Played) -> None:
        """Append what later steps of the same call gave."""
        self.reward += other.reward
        self.successes += other.successes
        self.elapsed += other.elapsed
        self.invalid = {**self.invalid, **other.invalid}
        self.terminated |= other.terminated
        self.truncated |= other.truncated
        self.metrics = other.metrics if other.metrics is not None else self.metrics
