"""Gymnasium's vector form of CoRE-Learning over `BatchedCore`: N episodes stepped as arrays.

``gymnasium.make_vec("coreenv/CoRE-v1", num_envs=N, vectorization_mode="vector_entry_point")``
gives `CoreVectorEnv`: N lanes of the centralised view (`CoreGymEnv`) in one process, with
Gymnasium's same-step auto-reset and sb3-contrib's action masks. ``view="nodes"`` gives every
node's observation instead, for multi-agent code (design §2, *Vector forms*).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from coreenv.config import EnvConfig, make_config
from coreenv.core.events import Decisions, make_decisions
from coreenv.core.features import OBS_BOUND
from coreenv.shells.spaces import state_space
from coreenv.errors import ConfigError
from coreenv.predictor import Predictor
from coreenv.shells.batched import BatchedCore

__all__ = ["VIEWS", "CoreVectorEnv", "LaneSeeds", "lane_seeds"]

VIEWS = ("state", "nodes")
"""What `CoreVectorEnv` shows: the global state (one controller) or every node's observation."""


class LaneSeeds:
    """Episode seeds of N lanes: lane b's j-th episode plays seed ``first[b] + j·N``.

    Seeding lanes ``s, s + 1, …`` (Gymnasium's convention for ``reset(seed=s)``) thus gives the
    lanes disjoint seeds forever, and a lane's episodes do not depend on when the others end.
    """

    def __init__(self, first: np.ndarray) -> None:
        self.first = np.asarray(first, np.int64)
        self.started = np.zeros(len(self.first), np.int64)

    def __call__(self, lane: int) -> int:
        """The seed of the next episode ``lane`` starts."""
        seed = int(self.upcoming()[lane])  # called only when an episode starts
        self.started[lane] += 1
        return seed

    def upcoming(self) -> np.ndarray:
        """(N,) the seed each lane's next episode will play."""
        return self.first + self.started * len(self.first)


def lane_seeds(
    seed: int | list[int] | None, num_envs: int, config: EnvConfig, seeds: LaneSeeds | None
) -> LaneSeeds:
    """The `LaneSeeds` a vector env's ``reset(seed=...)`` starts its N lanes on.

    An int s gives lanes ``s, s + 1, …``; a list one seed per lane; None each lane's next seed
    (``seeds``, the lanes' seeds so far), or the first time ``config.seed`` (random if None).
    """
    lanes = np.arange(num_envs, dtype=np.int64)
    if seed is None and seeds is not None:
        first = seeds.upcoming()
    elif seed is None:  # the first reset: config.seed, or a random base as CoreEnv's
        base = config.seed
        if base is None:
            base = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        first = base + lanes
    elif isinstance(seed, int | np.integer):
        first = int(seed) + lanes
    else:
        first = np.asarray(seed)
        if first.shape != (num_envs,):
            raise ValueError(
                f"reset(seed=...) takes an int or one seed per lane ({num_envs}), "
                f"got {len(first)} seeds."
            )
    return LaneSeeds(first)


class CoreVectorEnv(VectorEnv):
    """N CoRE-Learning episodes of one config as a `gymnasium.vector.VectorEnv`.

    Lane b on its j-th episode equals, step for step and bit for bit, one `CoreGymEnv` reset
    with seed ``first[b] + j·N``, where ``reset(seed=s)`` sets ``first[b] = s + b`` (a list sets
    them all; no seed: ``config.seed`` the first time (random if None), else each lane's next
    seed).

    Args:
        num_envs: N.
        config: the environment settings (`EnvConfig`); ``overrides`` are fields on top.
        predictor: fills the estimate features; one call per step for all lanes.
        view: ``"state"``, the global state `CoreEnv.state` (one controller), or ``"nodes"``,
            the (M, D) observations `CoreEnv` gives its nodes (node id first), for MARL code.
        decisions: when the nodes decide (`coreenv.Decisions`): every step (default), or at
            events (each step's infos then carry ``elapsed``, the steps each lane played).

    Action: (N, M) integers, one slot per node (``K`` idles), ``MultiDiscrete([K + 1] * M)`` per
    lane; invalid ones follow ``config.invalid_action``. Reward: the team reward. Auto-reset:
    same step (``metadata["autoreset_mode"]``): an ended lane shows its next episode's first
    observation, its last one in ``infos["final_obs"]`` and its metrics in
    ``infos["final_info"]["metrics"]``. Every step's infos carry ``successes`` and
    ``invalid_actions`` (node actions turned into idling), per lane.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        config: EnvConfig | None = None,
        *,
        predictor: Predictor | None = None,
        view: str = "state",
        decisions: Decisions | str | None = None,
        **overrides: Any,
    ) -> None:
        if view not in VIEWS:
            raise ConfigError(f"view must be one of {VIEWS}, got {view!r}.")
        self.config = cfg = make_config(config, **overrides)
        self.decisions = make_decisions(decisions)
        observation = "nodes" if view == "nodes" else "state"
        self.core = BatchedCore(cfg, num_envs, predictor, self.decisions, observation)
        self.num_envs = self.core.num_envs
        self.view = view
        m, k = cfg.num_nodes, cfg.num_slots
        self.single_observation_space = state_space(cfg)
        if view == "nodes":
            shape = (m, self.core.obs_dim)
            self.single_observation_space = spaces.Box(-OBS_BOUND, OBS_BOUND, shape, np.float32)
        self.single_action_space = spaces.MultiDiscrete(np.full(m, k + 1))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self.seeds: LaneSeeds | None = None
        self._shared_masks: np.ndarray | None = None  # (N, K + 1), as the core gives them

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every lane's next episode (seeds as the class docstring says)."""
        self.seeds = lane_seeds(seed, self.num_envs, self.config, self.seeds)
        start = self.core.reset(self.seeds)
        self._shared_masks = start.action_mask
        return start.obs, {"episode_seed": start.seeds}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply (N, M) node actions to every lane; ended lanes start their next episode."""
        if self.seeds is None:
            raise RuntimeError("CoreVectorEnv.step before reset: call reset() first.")
        step = self.core.step(np.asarray(actions))
        self._shared_masks = step.action_mask
        infos: dict[str, Any] = {
            "successes": step.successes,
            "invalid_actions": step.conflicts,
            "episode_seed": step.seeds,
        }
        if step.elapsed is not None:
            infos["elapsed"] = step.elapsed
        final = step.final_obs
        for lane, _, metrics in step.finished:
            ended = {"final_obs": final[lane], "final_info": {"metrics": metrics}}
            infos = self._add_info(infos, ended, lane)
        return step.obs, step.rewards, step.terminated, step.truncated, infos

    def action_masks(self) -> np.ndarray:
        """(N, M·(K + 1)) bool: each lane's node masks, concatenated (MaskablePPO's layout)."""
        return self.node_action_masks().reshape(self.num_envs, -1)

    def node_action_masks(self) -> np.ndarray:
        """(N, M, K + 1) bool: which slots each node of each lane may choose (last: idle)."""
        if self._shared_masks is None:
            raise RuntimeError("CoreVectorEnv.action_masks before reset: call reset() first.")
        shared = self._shared_masks.astype(bool)[:, None, :]  # every node of a lane has the same
        return np.repeat(shared, self.config.num_nodes, axis=1)

    def metrics(self) -> list[dict[str, float] | None]:
        """Design §2 metrics of each lane's running episode so far."""
        return self.core.metrics()
