"""The RL baselines' documented training recipes, by name (docs/rl.md, *The recipe that learns*).

``coreenv train-baseline --recipe NAME`` starts from one (options given beside it override its
settings) and `benchmarks/bench_training.py` times them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mara_agents.baselines.ippo import IPPOConfig
from mara_agents.baselines.maskable_ppo import MaskablePPOConfig
from mara_agents.baselines.runs import BaselineRun

__all__ = ["RECIPES", "Recipe", "make_recipe"]

Recipe = tuple[str, Mapping[str, Any]]
"""An algorithm's name (``train-baseline --algorithm``) and the config fields it sets."""

_SEQUENTIAL_PPO = {
    "form": "sequential",
    "decisions": "events",
    "envs": 64,
    "n_steps": 64,
    "minibatches": 16,
    "epochs": 10,
    "max_steps": 5_000_000,
    "eval_every": 250_000,
}

_LIVE_IPPO = {
    "live": True,
    "decisions": "events",
    "hidden": 64,
    "epochs": 10,
    "minibatches": 16,
    "lr": 3e-4,
    "max_steps": 1_523_712,
    "eval_every": 250_000,
}

RECIPES: Mapping[str, Recipe] = MappingProxyType(
    {
        "ppo_slots": ("maskable_ppo", {**_SEQUENTIAL_PPO, "policy": "slot_set"}),
        "ppo_sets": ("maskable_ppo", {**_SEQUENTIAL_PPO, "policy": "slot_sets"}),
        "ppo_mlp": ("maskable_ppo", {**_SEQUENTIAL_PPO, "policy": "mlp", "hidden": 64}),
        "ippo_live": ("ippo", {**_LIVE_IPPO, "policy": "slot_set"}),
        "ippo_sets": ("ippo", {**_LIVE_IPPO, "policy": "slot_sets"}),
    }
)
"""The slot-set MaskablePPO and its MLP reference on the sequential event form (64 lanes × 64
node choices per update, 16 minibatches, 10 epochs), and IPPO over live masks with the slot-set
network (32 lanes × 128 decisions per update, the MaskablePPO recipe's updates); the ``_sets``
recipes are the same with the network reading the nodes as a set, so that it plays any cluster
size."""

_CONFIGS: Mapping[str, type[BaselineRun]] = {"maskable_ppo": MaskablePPOConfig, "ippo": IPPOConfig}


def make_recipe(name: str, work: Path, **overrides: Any) -> BaselineRun:
    """The config of recipe ``name`` writing to ``work``, ``overrides`` on top of its settings."""
    if name not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {name!r}.")
    algorithm, settings = RECIPES[name]
    return _CONFIGS[algorithm](work=work, **{**settings, **overrides})
