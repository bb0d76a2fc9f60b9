"""One node's choice per step: a Gymnasium form of `CoreEnv` whose joint actions are matchings.

A single-agent learner picks the nodes' slots one after another. Each pick is masked by the
rule of the AEC form (`coreenv.masks.live_mask`: a slot an earlier node took this step is
not allowed), and the observation says which slots are taken and which node is choosing, so a
policy over ``Discrete(K + 1)`` expresses any matching and nothing else (docs/rl.md).

Slots are listed as the slot table holds them (``slot_order="table"``) or by deadline
(``"deadline"``: occupied slots soonest deadline first, then the empty ones), so that a position
in the observation means the same thing from step to step (`slot_listing`).

It is one lane of the sequential vector form (`SequentialVectorEnv`), which writes the turns
once: here the lane plays one episode at a time, drawn as `CoreEnv` draws it.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from coreenv.config import EnvConfig, make_config
from coreenv.core.events import Decisions
from coreenv.errors import InvalidActionError
from coreenv.masks import action_int, invalid_actions
from coreenv.predictor import Predictor
from coreenv.shells.parallel import CoreEnv
from coreenv.shells.render import Rendering, ansi_table
from coreenv.shells.sequential_vector import SequentialVectorEnv

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
        predictor: as `CoreEnv`'s.
        render_mode: as `CoreEnv`'s.
        decisions: as `CoreEnv`'s.
        overrides: `EnvConfig` fields on top of ``config``.
    """

    metadata = CoreEnv.metadata

    def __init__(
        self,
        config: EnvConfig | None = None,
        *,
        slot_order: str = "table",
        predictor: Predictor | None = None,
        render_mode: str | None = None,
        decisions: Decisions | str | None = None,
        **overrides: Any,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}."
            )
        self.config = cfg = make_config(config, **overrides)
        self.vector = SequentialVectorEnv(
            1, cfg, slot_order=slot_order, predictor=predictor, decisions=decisions
        )
        """The sequential vector form of this one lane (its core: ``vector.core``)."""
        self.slot_order, self.render_mode = slot_order, render_mode
        self.observation_space = self.vector.single_observation_space
        self.action_space = self.vector.single_action_space
        self._rendering = Rendering(render_mode, cfg.num_nodes, self.render_ansi)
        if render_mode is not None:
            self.vector.core.watch = self._rendering.watched
        self._agents = [f"node_{i}" for i in range(cfg.num_nodes)]
        self._row: list[Any] = [cfg.num_slots] * cfg.num_nodes  # this step's actions, given
        self.ended = True
        """Whether the episode was reported over (or never started): a step asks for a reset."""

    @property
    def listing(self) -> np.ndarray:
        """(K,) the slot each listed position of the last observation shows."""
        return self.vector.listing[0]

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """Start an episode (seeding as `CoreEnv.reset`) and play on to the first real choice.

        Until a task enters a slot there is nothing to choose; ``elapsed`` counts those steps,
        and the first `step` reports what they gave (an episode with nothing to choose at all
        ends there). ``options`` is accepted for API compatibility and not used.
        """
        if seed is None and self._np_random is None:
            seed = self.config.seed
        super().reset(seed=seed)
        self._rendering.restart()
        self._row = [self.config.num_slots] * self.config.num_nodes
        obs, infos = self.vector.start([self.np_random])  # one episode: the lane then stops
        self.ended = False
        return obs[0], {"node": int(infos["node"][0]), "elapsed": int(infos["elapsed"][0])}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """The choosing node's slot; plays the joint action once every node has chosen."""
        if self.ended:
            raise RuntimeError("the episode is over (or never started): call reset() first.")
        vector, k = self.vector, self.config.num_slots
        mask = vector.step_masks()[0]  # the step mask the joint action is played under
        choosing = bool(vector.core.active[0])  # else the episode ended before its first choice
        if choosing:
            self._row[vector.turns()[0]] = self._slot(action)
            if self.config.invalid_action == "raise":
                self._check(mask)  # before anything changes: the node may choose again
        choice = action if type(action) is int else action_int(action, k)
        obs, rewards, terminated, truncated, infos = vector.step(np.array([choice], np.int64))
        reasons = self._reasons(mask) if infos["invalid_actions"][0] else {}
        if infos["elapsed"][0]:  # the joint action was played: the next one starts afresh
            self._row = [k] * self.config.num_nodes
        info = {
            "node": int(infos["node"][0]),
            "elapsed": int(infos["elapsed"][0]),
            "successes": int(infos["successes"][0]),
            "invalid_actions": reasons,
        }
        ended = vector.finished.get(0)
        if ended is not None:
            info["metrics"] = ended.metrics
            self.ended = True
        return obs[0], float(rewards[0]), bool(terminated[0]), bool(truncated[0]), info

    def action_masks(self) -> np.ndarray:
        """(K + 1,) bool: the choosing node's live mask, its slots in the listed order."""
        return self.vector.action_masks()[0]

    def render(self) -> str | np.ndarray | None:
        """As `CoreEnv.render`."""
        return self._rendering.render()

    def render_ansi(self) -> str:
        """The slot table as text (who served whom: in a render mode), as `CoreEnv`'s."""
        core = self.vector.core
        return ansi_table(core.view(), core.metrics()[0], self._rendering.served, self._agents)

    def close(self) -> None:
        """Nothing to release."""

    def _slot(self, action: Any) -> Any:
        """The table slot of a listed position; anything else as it is (the rule judges it)."""
        k = self.config.num_slots
        if self.slot_order != "table" and isinstance(action, (int, np.integer)) and 0 <= action < k:
            return int(self.listing[action])
        return action

    def _check(self, mask: np.ndarray) -> None:
        """Under ``invalid_action="raise"``, refuse a choice the node cannot carry out, at once.

        The rule is the parallel env's (`invalid_actions`); the step's earlier choices stay.
        """
        node = int(self.vector.turns()[0])
        agent = self._agents[node]
        why = self._reasons(mask, node + 1).get(agent)
        if why is not None:
            self._row[node] = self.config.num_slots
            raise InvalidActionError(f"invalid action at t={self.vector.core.t[0]}: {agent}: {why}.")

    def _reasons(self, mask: np.ndarray, nodes: int | None = None) -> dict[str, str]:
        """Why each of the first ``nodes`` nodes (all: None) idles under ``mask``."""
        agents = self._agents[:nodes]
        return invalid_actions(dict(zip(agents, self._row)), agents, mask)
