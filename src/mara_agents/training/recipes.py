"""The RL baselines' documented training recipes, by name (docs/rl.md, *The recipe that learns*).

``coreenv train-baseline`` runs ``ppo`` (its options override the recipe's settings) and
`benchmarks/bench_training.py` times it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mara_agents.training.maskable_ppo import MaskablePPOConfig

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

RECIPES: Mapping[str, Recipe] = MappingProxyType(
    {"ppo": ("maskable_ppo", {**_SEQUENTIAL_PPO, "policy": "slot_sets"})}
)
"""The recipe of the shipped baseline ``ppo``: the slot-set MaskablePPO reading the nodes as a
set, on the sequential event form (64 lanes × 64 node choices per update, 16 minibatches, 10
epochs), so that it plays any number of equal nodes."""

_CONFIGS: Mapping[str, type[MaskablePPOConfig]] = {"maskable_ppo": MaskablePPOConfig}


def make_recipe(name: str, work: Path, **overrides: Any) -> MaskablePPOConfig:
    """The config of recipe ``name`` writing to ``work``, ``overrides`` on top of its settings."""
    if name not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {name!r}.")
    algorithm, settings = RECIPES[name]
    return _CONFIGS[algorithm](work=work, **{**settings, **overrides})
