"""A slot-set policy for sb3-contrib's `MaskablePPO` on the sequential form (design §4, baselines).

Slots are interchangeable: the same task in another slot is the same situation. An MLP over the
flat state must learn each slot's meaning K times; this policy encodes every slot block (with its
"taken" flag) by one shared network, pools the occupied slots into a context with the global
features and the choosing node, and scores each slot from its encoding and the context, as MARA's
pointer head does; idling is scored from the context. Use it with
`coreenv.CoreSequentialEnv` observations: ``MaskablePPO(SlotSetPolicy, env,
policy_kwargs=slot_set_kwargs(config))``.
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
from coreenv.layout import GLOBAL_FEATURES, slot_width

__all__ = [
    "PointerHead",
    "SlotSetExtractor",
    "SlotSetPolicy",
    "orthogonal",
    "sequential_size",
    "slot_set_kwargs",
]

_GLOBALS = len(GLOBAL_FEATURES)


def sequential_size(num_slots: int, slot_width: int, num_nodes: int) -> int:
    """Length of a sequential observation: the globals, K slot blocks, K taken flags, the node."""
    return _GLOBALS + num_slots * (slot_width + 1) + num_nodes


class SlotSetExtractor(BaseFeaturesExtractor):
    """Sequential observations -> each slot's encoding and a context, (K + 1) · width features.

    Args:
        observation_space: the sequential form's Box (`coreenv.layout.sequential_layout`).
        num_slots, slot_width, num_nodes: K, F and M of the environment's config.
        width: width of the encodings and the context.
    """

    def __init__(
        self,
        observation_space: gym.spaces.Box,
        num_slots: int,
        slot_width: int,
        num_nodes: int,
        width: int = 64,
    ) -> None:
        size = sequential_size(num_slots, slot_width, num_nodes)
        if observation_space.shape != (size,):
            raise ValueError(
                f"SlotSetExtractor for K={num_slots}, F={slot_width}, M={num_nodes} reads "
                f"sequential observations of shape ({size},), got {observation_space.shape}."
            )
        super().__init__(observation_space, (num_slots + 1) * width)
        self.num_slots, self.slot_width, self.width = num_slots, slot_width, width
        self.encode = nn.Sequential(
            nn.Linear(slot_width + 1, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU()
        )
        self.context = nn.Sequential(nn.Linear(width + _GLOBALS + num_nodes, width), nn.ReLU())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, size) observations -> (B, (K + 1) · width): K slot encodings, then the context."""
        k, f = self.num_slots, self.slot_width
        table_end = _GLOBALS + k * f
        slots = obs[:, _GLOBALS:table_end].reshape(-1, k, f)
        taken = obs[:, table_end : table_end + k, None]
        encoded = self.encode(torch.cat((slots, taken), dim=-1))  # (B, K, width)
        occupied = slots[..., int(SlotFeature.OCCUPIED), None]
        pooled = (encoded * occupied).sum(1) / occupied.sum(1).clamp(min=1.0)
        context = self.context(
            torch.cat((pooled, obs[:, :_GLOBALS], obs[:, table_end + k :]), dim=-1)
        )
        return torch.cat((encoded.flatten(1), context), dim=-1)


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


def slot_set_kwargs(config: EnvConfig, width: int = 64, value: tuple[int, ...] = (64,)) -> dict:
    """``policy_kwargs`` of a `SlotSetPolicy` for ``config``'s sequential observations."""
    return {
        "features_extractor_class": SlotSetExtractor,
        "features_extractor_kwargs": {
            "num_slots": config.num_slots,
            "slot_width": slot_width(config),
            "num_nodes": config.num_nodes,
            "width": width,
        },
        "net_arch": {"pi": [], "vf": list(value)},
        "activation_fn": nn.ReLU,
    }
