"""The shipped MaskablePPO baseline as a scheduler: sb3-contrib models played in their form.

A model trained by `mara_agents.training.maskable_ppo` (``coreenv train-baseline``) plays as
`SequentialPPOScheduler` (one node's choice after another, under live masks, in the decision form
it trained in) or, trained on the joint form, as `MaskablePPOScheduler`. `load_scheduler` reads
either from its file; `SHIPPED` is the slot-set policy the sweep's method ``ppo`` plays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.preprocessing import get_flattened_obs_dim
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from coreenv import Decisions, EnvConfig, SchedulerView
from coreenv.layout import listed_state, live_mask, sequential_layout, slot_listing
from mara_agents.baselines.slot_set import SlotSetPolicy, layout_key, resized
from mara_agents.policy.mat import symlog
from mara_agents.schedulers.base import Scheduler
from mara_agents.schedulers.variants import CHECKPOINTS

__all__ = [
    "DECISIONS",
    "OBSERVED",
    "OBSERVES",
    "SHIPPED",
    "SLOT_ORDER",
    "MaskablePPOScheduler",
    "SequentialPPOScheduler",
    "SymlogFlatten",
    "load_scheduler",
    "observes",
    "policy_name",
    "scheduler_of",
]

OBSERVED = "wls"
"""The predictor whose estimates the baselines observe (LARA's: cheap, and never silent -1s)."""
DECISIONS = "coreenv_decisions"
"""The saved model's attribute naming the decision form it was trained in."""
SLOT_ORDER = "coreenv_slot_order"
"""The saved sequential model's attribute naming how its observations list the slots."""
OBSERVES = "coreenv_observes"
"""The saved model's attribute naming the predictor it observes and its category fields."""

SHIPPED = CHECKPOINTS / "ppo_sets.zip"
"""The shipped model (sweep method ``ppo``): the slot-set policy reading the nodes as a set,
trained on the sequential event form at 4 nodes and 8 slots; it plays any number of equal nodes
(docs/rl.md)."""


class SymlogFlatten(BaseFeaturesExtractor):
    """Flat observations read as ``sign(x)·log(1 + |x|)`` (policy ``symlog_mlp``).

    The remaining-batch estimates reach OBS_BOUND (1000) while every other feature lies within
    about ±4 (docs/mara.md), so a plain MLP reads them on a scale far from the rest.
    """

    def __init__(self, observation_space: gym.spaces.Box) -> None:
        super().__init__(observation_space, get_flattened_obs_dim(observation_space))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, ...) observations -> (B, size) symlog features."""
        return symlog(obs.flatten(1))


def policy_name(model: MaskablePPO) -> str:
    """Which of `POLICIES` a MaskablePPO model's network is."""
    if issubclass(model.policy_class, SlotSetPolicy):
        sets = model.policy_kwargs["features_extractor_kwargs"].get("sets", False)
        return "slot_sets" if sets else "slot_set"
    extractor = model.policy_kwargs.get("features_extractor_class")
    return "symlog_mlp" if extractor is SymlogFlatten else "mlp"


class MaskablePPOScheduler(Scheduler):
    """A trained `MaskablePPO` as a scheduler: the deterministic action of the global state.

    Each node takes its own most likely allowed slot, as MaskablePPO's ``predict`` does, so two
    nodes may name one slot (a conflict: the environment idles one). With ``distinct`` the nodes
    choose one after another, each its most likely slot that no earlier node took (the order of
    MAT's decoder): the same choices where there is no conflict. It reads the observation arrays
    only, so runners play it in lockstep (`act_view`).
    """

    observation_kind_fields: tuple[str, ...] = ()  # trained without category columns

    name = "ppo_joint"
    observation_predictor = OBSERVED

    def __init__(self, model: MaskablePPO, distinct: bool = False) -> None:
        self.model = model
        self.distinct = distinct

    @classmethod
    def load(cls, path: Path, distinct: bool = False) -> MaskablePPOScheduler:
        """The scheduler of a saved joint-form model: a run's ``model.zip`` or ``best.zip``."""
        if not Path(path).is_file():
            raise FileNotFoundError(f"no MaskablePPO model at {path}.")
        model = MaskablePPO.load(path, device="cpu")
        if hasattr(model, DECISIONS):
            raise ValueError(
                f"{path} holds a sequential-form model: load it with "
                "mara_agents.baselines.maskable_ppo.load_scheduler, which plays it in its form."
            )
        return cls(model, distinct)

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """(E, M) actions of the view's observations (`actions`)."""
        return self.actions(view.obs, view.action_mask)

    def actions(self, obs: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """(E, M) actions of (E, M, D) observations: the state is one without its one-hot id."""
        nodes = obs.shape[1]
        state = obs[:, 0, nodes:]
        masks = np.tile(action_mask.astype(bool), nodes)  # (E, M·(K + 1)), node after node
        if not self.distinct:
            actions, _ = self.model.predict(state, action_masks=masks, deterministic=True)
            return actions.reshape(len(obs), nodes)
        with torch.no_grad():
            heads = self.model.policy.get_distribution(
                torch.as_tensor(state), action_masks=masks
            ).distributions
        free = action_mask.astype(bool)  # (E, K + 1); the last choice, idling, is never taken
        lanes = np.arange(len(obs))
        actions = np.empty((len(obs), nodes), np.int64)
        for node, head in enumerate(heads):
            actions[:, node] = np.where(free, head.logits.numpy(), -np.inf).argmax(1)
            free[lanes, actions[:, node]] = False
            free[:, -1] = True
        return actions


class SequentialPPOScheduler(Scheduler):
    """A `MaskablePPO` trained on the sequential form, as a scheduler: nodes choose in turn.

    Node i's observation is the state, the slots the nodes before it took and its one-hot id
    (`coreenv.CoreSequentialEnv`); it takes its most likely slot under the live mask. It plays in
    the decision form it was trained in (``decisions``), in lockstep (`act_view`). A slot-set
    policy that reads sets (``slot_sets``) plays any cluster size (`slot_set.resized`).
    """

    observation_kind_fields: tuple[str, ...] = ()  # trained without category columns

    name = "ppo_seq"
    observation_predictor = OBSERVED

    def __init__(self, model: MaskablePPO, decisions: Decisions, slot_order: str = "table") -> None:
        self.model = model
        self.decisions = decisions
        self.slot_order = slot_order
        self._sized: dict[tuple, Any] = {}  # the network resized to each layout played

    def act_view(self, view: SchedulerView) -> np.ndarray:
        """(E, M) actions: node after node, each the greedy choice under its live mask."""
        nodes, k = view.num_nodes, view.num_slots
        policy = self._policy(view.configs[0])
        state = view.obs[:, 0, nodes:]
        listing = slot_listing(state, view.configs[0], self.slot_order)
        lanes = np.arange(view.num_episodes)[:, None]
        actions = np.full((view.num_episodes, nodes), k, np.int64)
        obs = np.zeros((view.num_episodes, state.shape[1] + k + nodes), np.float32)
        obs[:, : state.shape[1]] = listed_state(state, listing, view.configs[0])
        masks = np.empty((view.num_episodes, k + 1), bool)
        for node in range(nodes):
            for e in range(view.num_episodes):
                live, taken = live_mask(view.action_mask[e], actions[e, :node].tolist())
                masks[e], obs[e, state.shape[1] : -nodes] = live, taken
            masks[:, :k] = masks[lanes, listing]
            obs[:, state.shape[1] : -nodes] = obs[:, state.shape[1] : -nodes][lanes, listing]
            obs[:, -nodes:] = 0.0
            obs[:, -nodes + node] = 1.0
            chosen, _ = policy.predict(obs, action_masks=masks, deterministic=True)
            listed = listing[lanes[:, 0], np.minimum(chosen, k - 1)]  # the slot a position shows
            actions[:, node] = np.where(chosen < k, listed, k)  # k idles
        return actions

    def _policy(self, config: EnvConfig) -> Any:
        """The network reading ``config``'s observations, made once per layout."""
        layout = layout_key(config)
        if layout not in self._sized:  # one layout in play at a time
            self._sized = {layout: self._network_for(config)}
        return self._sized[layout]

    def _network_for(self, config: EnvConfig) -> Any:
        """The model's network, resized to ``config`` if it reads sets; ValueError if it cannot."""
        policy = self.model.policy
        if isinstance(policy, SlotSetPolicy):
            return resized(policy, config)
        size = sequential_layout(config)[2]
        if policy.observation_space.shape != (size,):
            raise ValueError(
                f"this policy reads sequential observations of {policy.observation_space.shape[0]}"
                f" features, this cluster's have {size} ({config.num_nodes} nodes, "
                f"{config.num_slots} slots): it was trained on another layout; the policy that "
                "plays any cluster size is 'ppo'."
            )
        return policy


def load_scheduler(path: Path) -> MaskablePPOScheduler | SequentialPPOScheduler:
    """The scheduler of a saved model (``model.zip``, ``best.zip``) in the form it was trained."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no MaskablePPO model at {path}.")
    return scheduler_of(MaskablePPO.load(path, device="cpu"))


def observes(model: MaskablePPO) -> dict:
    """The predictor ``model`` observes and the fields of its category columns."""
    return getattr(model, OBSERVES, {"predictor": OBSERVED, "kind_fields": []})


def scheduler_of(model: MaskablePPO) -> MaskablePPOScheduler | SequentialPPOScheduler:
    """The scheduler of ``model`` in the form and on the observation it was trained in.

    A joint-form model plays as the every-step baseline.
    """
    decisions = getattr(model, DECISIONS, None)
    if decisions is None:
        scheduler = MaskablePPOScheduler(model)
    else:
        scheduler = SequentialPPOScheduler(
            model, Decisions(**decisions), getattr(model, SLOT_ORDER, "table")
        )
    observed = observes(model)
    scheduler.observation_predictor = observed["predictor"]
    scheduler.observation_kind_fields = tuple(observed["kind_fields"])
    return scheduler
