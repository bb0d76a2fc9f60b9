"""Every RL baseline's training recipe, by name: the shipped ``ppo`` and the lab's.

`mara_agents.training.recipes` keeps only the recipe of the shipped baseline (``coreenv
train-baseline``); the recipes of the baselines it superseded (the sweep methods
``coreenv_lab.methods:ppo_slots``, ``ppo_mlp``, ``ippo_live``, ``ippo_sets``) live here. There
is no command for them: a script trains one with

    config = make_recipe("ippo_live", Path("results/ippo_live"), seed=1)
    TRAINERS[type(config)](config)  # train_maskable_ppo or train_ippo

`benchmarks/bench_training.py` times them (docs/rl.md, *The recipe that learns*).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from coreenv_lab.baselines.ippo import IPPOConfig, train_ippo
from mara_agents.training import recipes as shipped
from mara_agents.training.maskable_ppo import MaskablePPOConfig, train_maskable_ppo
from mara_agents.training.runs import BaselineRun

__all__ = ["RECIPES", "TRAINERS", "make_recipe"]

_SEQUENTIAL_PPO = {k: v for k, v in shipped.RECIPES["ppo"][1].items() if k != "policy"}
"""The shipped recipe's settings but its network: the sequential event form, 64 lanes x 64 steps."""

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

RECIPES: Mapping[str, shipped.Recipe] = MappingProxyType(
    {
        **shipped.RECIPES,
        "ppo_slots": ("maskable_ppo", {**_SEQUENTIAL_PPO, "policy": "slot_set"}),
        "ppo_mlp": ("maskable_ppo", {**_SEQUENTIAL_PPO, "policy": "mlp", "hidden": 64}),
        "ippo_live": ("ippo", {**_LIVE_IPPO, "policy": "slot_set"}),
        "ippo_sets": ("ippo", {**_LIVE_IPPO, "policy": "slot_sets"}),
    }
)
"""``ppo`` (the shipped slot-set MaskablePPO reading the nodes as a set; its recipe was called
``ppo_sets`` before 0.3.0), the same reading node ids (``ppo_slots``) and its MLP reference
(``ppo_mlp``), all on the sequential event form (64 lanes × 64 node choices per update, 16
minibatches, 10 epochs); IPPO over live masks with the slot-set network (32 lanes × 128 decisions
per update, the MaskablePPO recipe's updates), reading node ids (``ippo_live``) or the nodes as a
set (``ippo_sets``), so that it plays any cluster size."""

_CONFIGS: Mapping[str, type[BaselineRun]] = {"maskable_ppo": MaskablePPOConfig, "ippo": IPPOConfig}

TRAINERS: Mapping[type[BaselineRun], Callable[..., list[dict]]] = MappingProxyType(
    {MaskablePPOConfig: train_maskable_ppo, IPPOConfig: train_ippo}
)
"""The function that trains (or resumes) a run of each config type; each returns its history."""


def make_recipe(name: str, work: Path, **overrides: Any) -> BaselineRun:
    """The config of recipe ``name`` writing to ``work``, ``overrides`` on top of its settings."""
    if name not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {name!r}.")
    algorithm, settings = RECIPES[name]
    return _CONFIGS[algorithm](work=work, **{**settings, **overrides})
