"""A slot-set policy for sb3-contrib's `MaskablePPO` on the sequential form (design §4, baselines).

Slots are interchangeable: the same task in another slot is the same situation. An MLP over the
flat state must learn each slot's meaning K times; this policy encodes every slot block (with its
"taken" flag) by one shared network, pools the occupied slots into a context with the global
features and the choosing node, and scores each slot from its encoding and the context, as MARA's
pointer head does; idling is scored from the context. Use it with
`coreenv.CoreSequentialEnv` observations: ``MaskablePPO(SlotSetPolicy, env,
policy_kwargs=slot_set_kwargs(config))``.

With ``sets`` the network reads the nodes as a set too (design §4, *Any cluster size*): the
choosing node is described by `NODE_FEATURES` instead of a one-hot id and a slot's last node by
whether it is the choosing one, so no weight the policy acts with depends on M or K and one policy
plays any cluster size (`resized`). The value MLP, used in training only, reads the K encodings of
the size it was trained at (a value over the pooled context alone did not learn).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn
from torch.nn import functional as F

from coreenv import EnvConfig, SlotFeature
from coreenv.layout import (
    GLOBAL_FEATURES,
    cluster_columns,
    sequential_layout,
    slot_width,
    speed_columns,
)

__all__ = [
    "NODE_FEATURES",
    "acting_weights",
    "extractor_for",
    "layout_key",
    "PointerHead",
    "SlotSetExtractor",
    "SlotSetPolicy",
    "orthogonal",
    "resized",
    "sequential_size",
    "slot_set_kwargs",
]

_GLOBALS = len(GLOBAL_FEATURES)
CRITIC = ("mlp_extractor.value_net.", "value_net.")
"""The names of a `SlotSetPolicy`'s value weights, which a policy resized to another K leaves."""

NODE_FEATURES = ("nodes_after", "speed")
"""What a ``sets`` network knows of the choosing node: the share of the nodes still to choose
after it, (M − 1 − i) / M, and its speed (1 where the cluster is not shown)."""


def sequential_size(num_slots: int, slot_width: int, num_nodes: int, speeds: int = 0) -> int:
    """Length of a sequential observation.

    The globals, ``speeds`` node speeds, K slot blocks, K taken flags, the node's one-hot id.
    """
    return _GLOBALS + speeds + num_slots * (slot_width + 1) + num_nodes


class SlotSetExtractor(BaseFeaturesExtractor):
    """Sequential observations -> each slot's encoding and a context, (K + 1) · width features.

    Args:
        observation_space: the sequential form's Box (`coreenv.layout.sequential_layout`).
        num_slots, slot_width, num_nodes: K, F and M of the environment's config.
        width: width of the encodings and the context.
        sets: read the choosing node by its `NODE_FEATURES`, not its id (no weight depends on M).
        speeds: the node-speed columns after the globals (`coreenv.layout.speed_columns`).
        cluster_column: the slot column of the task's last node (-1: not shown); with ``sets`` it
            is read as "the choosing node".
    """

    def __init__(
        self,
        observation_space: gym.spaces.Box,
        num_slots: int,
        slot_width: int,
        num_nodes: int,
        width: int = 64,
        sets: bool = False,
        speeds: int = 0,
        cluster_column: int = -1,
    ) -> None:
        size = sequential_size(num_slots, slot_width, num_nodes, speeds)
        if observation_space.shape != (size,):
            raise ValueError(
                f"SlotSetExtractor for K={num_slots}, F={slot_width}, M={num_nodes} reads "
                f"sequential observations of shape ({size},), got {observation_space.shape}."
            )
        super().__init__(observation_space, (num_slots + 1) * width)
        self.num_slots, self.slot_width, self.num_nodes = num_slots, slot_width, num_nodes
        self.width, self.sets, self.speeds = width, sets, speeds
        self.cluster_column = cluster_column
        self.encode = nn.Sequential(
            nn.Linear(slot_width + 1, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU()
        )
        node = len(NODE_FEATURES) if sets else speeds + num_nodes
        self.context = nn.Sequential(nn.Linear(width + _GLOBALS + node, width), nn.ReLU())

    @property
    def arguments(self) -> dict[str, Any]:
        """What it was built with, but the observation space (`slot_set_kwargs`' keys)."""
        return {
            "num_slots": self.num_slots,
            "slot_width": self.slot_width,
            "num_nodes": self.num_nodes,
            "width": self.width,
            "sets": self.sets,
            "speeds": self.speeds,
            "cluster_column": self.cluster_column,
        }

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, size) observations -> (B, (K + 1) · width): K slot encodings, then the context."""
        k, f = self.num_slots, self.slot_width
        table = _GLOBALS + self.speeds
        table_end = table + k * f
        slots = obs[:, table:table_end].reshape(-1, k, f)
        taken = obs[:, table_end : table_end + k, None]
        node = obs[:, table_end + k :]
        if self.sets:
            slots, node = self._as_sets(obs[:, _GLOBALS:table], slots, node)
        encoded = self.encode(torch.cat((slots, taken), dim=-1))  # (B, K, width)
        occupied = slots[..., int(SlotFeature.OCCUPIED), None]
        pooled = (encoded * occupied).sum(1) / occupied.sum(1).clamp(min=1.0)
        shown = obs[:, :_GLOBALS] if self.sets else obs[:, :table]
        context = self.context(torch.cat((pooled, shown, node), dim=-1))
        return torch.cat((encoded.flatten(1), context), dim=-1)

    def _as_sets(
        self, speeds: torch.Tensor, slots: torch.Tensor, one_hot: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The slot blocks and the choosing node as a set reads them.

        The last node's column becomes "last trained on the choosing node", and the node its
        `NODE_FEATURES`, from its one-hot id.
        """
        m = self.num_nodes
        index = one_hot.argmax(1)  # (B,)
        after = (m - 1 - index).to(slots.dtype) / m
        speed = speeds.gather(1, index[:, None])[:, 0] if self.speeds else torch.ones_like(after)
        if self.cluster_column >= 0:
            c = self.cluster_column
            last = torch.round(slots[..., c] * m) - 1  # (B, K), -1: none yet
            mine = (last == index[:, None].to(last.dtype)).to(slots.dtype)
            slots = torch.cat((slots[..., :c], mine[..., None], slots[..., c + 1 :]), dim=-1)
        return slots, torch.stack((after, speed), dim=-1)


def orthogonal(module: nn.Module, gain: float) -> None:
    """PPO's start of every linear layer in ``module``: orthogonal weights, zero biases."""

    def start(layer: nn.Module) -> None:
        if isinstance(layer, nn.Linear):
            nn.init.orthogonal_(layer.weight, gain)
            nn.init.zeros_(layer.bias)

    module.apply(start)


class PointerHead(nn.Module):
    """(B, (K + 1) · width) features -> K + 1 logits: each slot's score, then idling's."""

    def __init__(self, num_slots: int, width: int) -> None:
        super().__init__()
        self.num_slots, self.width = num_slots, width
        self.score = nn.Sequential(nn.Linear(2 * width, width), nn.ReLU(), nn.Linear(width, 1))
        self.idle = nn.Linear(width, 1)

    def initialise(self) -> None:
        """PPO's start: orthogonal weights of gain sqrt(2) inside, near-uniform first choices."""
        orthogonal(self, np.sqrt(2))
        for last in (self.score[-1], self.idle):
            orthogonal(last, 0.01)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """The logits of the choosing node's K + 1 actions.

        ``score`` reads each slot's encoding beside the context; its first layer is applied as
        the sum of its two halves, so the context's half is computed once per sample, not once
        per slot (the same function, a third fewer multiplications).
        """
        parts = features.reshape(-1, self.num_slots + 1, self.width)
        encoded, context = parts[:, :-1], parts[:, -1]
        first, _, last = self.score
        half = self.width
        hidden = F.linear(encoded, first.weight[:, :half])
        hidden = hidden + F.linear(context, first.weight[:, half:], first.bias)[:, None]
        scores = last(torch.relu(hidden)).squeeze(-1)
        return torch.cat((scores, self.idle(context)), dim=-1)


class SlotSetPolicy(MaskableActorCriticPolicy):
    """`MaskableActorCriticPolicy` whose actions are scored slot by slot (`PointerHead`).

    Its features extractor must be a `SlotSetExtractor` (`slot_set_kwargs` sets it); the value
    MLP (``net_arch["vf"]``) reads the slot encodings and the context.
    """

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        extractor = self.features_extractor
        if not isinstance(extractor, SlotSetExtractor):
            raise TypeError(
                f"SlotSetPolicy needs a SlotSetExtractor, got {type(extractor).__name__}."
            )
        if self.mlp_extractor.latent_dim_pi != extractor.features_dim:
            raise ValueError(
                "SlotSetPolicy scores the extractor's slot encodings directly: net_arch['pi'] must "
                f"be empty, got {self.net_arch}."
            )
        head = self.action_net = PointerHead(extractor.num_slots, extractor.width)
        if self.ortho_init:
            head.initialise()
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )


def slot_set_kwargs(
    config: EnvConfig, width: int = 64, value: tuple[int, ...] = (64,), sets: bool = False
) -> dict:
    """``policy_kwargs`` of a `SlotSetPolicy` for ``config``'s sequential observations.

    ``sets``: a policy that reads the nodes as a set and plays any cluster size.
    """
    return {
        "features_extractor_class": SlotSetExtractor,
        "features_extractor_kwargs": {
            "num_slots": config.num_slots,
            "slot_width": slot_width(config),
            "num_nodes": config.num_nodes,
            "width": width,
            "sets": sets,
            "speeds": speed_columns(config),
            "cluster_column": cluster_columns(config).start if config.cluster_shown else -1,
        },
        "net_arch": {"pi": [], "vf": list(value)},
        "activation_fn": nn.ReLU,
    }


def layout_key(config: EnvConfig) -> tuple:
    """What decides which copy of a network reads ``config``'s observations (a cache key)."""
    return config.num_nodes, config.num_slots, slot_width(config), config.cluster_shown


def extractor_for(trained: SlotSetExtractor, config: EnvConfig) -> dict[str, Any]:
    """The arguments of a `SlotSetExtractor` like ``trained`` reading ``config``.

    ValueError if no copy of its network can read it: the slot blocks must have the trained
    columns, and the sizes may differ only for a ``sets`` network.
    """
    known = trained.arguments
    asked = slot_set_kwargs(config, trained.width, sets=trained.sets)
    asked = asked["features_extractor_kwargs"]
    columns = ("slot_width", "cluster_column")
    if any(known[name] != asked[name] for name in columns):
        raise ValueError(
            f"this policy reads slot blocks of {known['slot_width']} columns (the last node's "
            f"at {known['cluster_column']}), this cluster's have {asked['slot_width']} (at "
            f"{asked['cluster_column']}): it was trained on episodes with other slot columns "
            "(estimate quantiles, category columns, or a cluster that shows its speeds)."
        )
    if not trained.sets and known != asked:
        raise ValueError(
            f"this slot-set policy was trained at {known['num_nodes']} nodes and "
            f"{known['num_slots']} slots and reads that layout only, got {config.num_nodes} "
            f"nodes and {config.num_slots} slots: it was trained on another layout; the policy "
            "that plays any cluster size is 'ppo'."
        )
    return asked


def acting_weights(network: nn.Module, critic: tuple[str, ...]) -> dict[str, torch.Tensor]:
    """``network``'s weights but its value's (names starting with ``critic``).

    The value reads the K slot encodings of the training size, so it does not carry to another.
    """
    return {n: w for n, w in network.state_dict().items() if not n.startswith(critic)}


def resized(policy: SlotSetPolicy, config: EnvConfig) -> SlotSetPolicy:
    """``policy`` reading ``config``'s cluster (`extractor_for` says when it cannot).

    Itself at its own layout, else (``sets`` only) a copy that acts with the same weights (its
    value MLP starts afresh).
    """
    asked = extractor_for(policy.features_extractor, config)
    if asked == policy.features_extractor.arguments:
        return policy
    built = policy._get_constructor_parameters()  # what SB3 saves to build the policy again
    built |= {
        "observation_space": gym.spaces.Box(-np.inf, np.inf, (sequential_layout(config)[2],)),
        "action_space": gym.spaces.Discrete(config.num_slots + 1),
        "features_extractor_kwargs": asked,
    }
    copy = type(policy)(**built)
    copy.load_state_dict(acting_weights(policy, CRITIC), strict=False)
    copy.set_training_mode(False)
    return copy
