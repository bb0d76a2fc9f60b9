"""Where each part of an observation lies, for code that reads observations as arrays.

A node's observation (`CoreEnv`) is its one-hot id, the `GLOBAL_FEATURES`, each node's speed once
the cluster is shown (`speed_columns`), then K slot blocks of `slot_width` columns (`SlotFeature`,
then `cluster_columns` and `category_columns`), every value within ``[-OBS_BOUND, OBS_BOUND]``;
`table_start` says where the blocks start and `slot_tables` cuts them out. The forms in which
nodes choose in turn mask each choice by `live_mask` (`live_masks`: B lanes at once); the
sequential Gymnasium form's observation is laid out by `sequential_layout` and lists its slots in
one of `SLOT_ORDERS` (`slot_listing`, `listed_state`).
"""

from __future__ import annotations

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core.features import (
    CLUSTER_FEATURES,
    GLOBAL_FEATURES,
    OBS_BOUND,
    SlotFeature,
    category_columns,
    cluster_columns,
    observation_size,
    slot_tables,
    slot_width,
    speed_columns,
    table_start,
)
from coreenv.masks import live_mask, live_masks

__all__ = [
    "CLUSTER_FEATURES",
    "GLOBAL_FEATURES",
    "OBS_BOUND",
    "SLOT_ORDERS",
    "category_columns",
    "cluster_columns",
    "global_names",
    "listed_state",
    "live_mask",
    "live_masks",
    "sequential_layout",
    "slot_listing",
    "slot_names",
    "slot_tables",
    "slot_width",
    "speed_columns",
    "table_start",
]

SLOT_ORDERS = ("table", "deadline")
"""How a sequential observation lists the slots: as the table holds them, or by deadline."""


def global_names(config: EnvConfig) -> list[str]:
    """The names of a state's global columns: `GLOBAL_FEATURES`, then any node speeds."""
    return [*GLOBAL_FEATURES, *(f"speed_{i}" for i in range(speed_columns(config)))]


def slot_names(config: EnvConfig) -> list[str]:
    """The names of a slot block's columns, in order (`slot_width` of them)."""
    names = [f.name.lower() for f in SlotFeature]
    names += [f"quantile_{q}" for q in config.estimate_quantiles]
    names += list(CLUSTER_FEATURES) if config.cluster_shown else []
    return names + [f"{field}_id" for field in config.kind_fields[: category_columns(config)]]


def sequential_layout(config: EnvConfig) -> tuple[int, int, int]:
    """Where the parts of a sequential observation start: the taken flags, the node, the end."""
    taken = observation_size(config) - config.num_nodes  # the state's size
    node = taken + config.num_slots
    return taken, node, node + config.num_nodes


def slot_listing(states: np.ndarray, config: EnvConfig, order: str) -> np.ndarray:
    """(…, K) which slot each listed position shows, for (…, D) states (`CoreEnv.state`).

    ``"table"``: the slot table's order. ``"deadline"``: occupied slots by time left, soonest
    first, then the empty ones; ties keep the table's order.
    """
    blocks = _slot_blocks(states, config)
    if order == "table":
        return np.broadcast_to(np.arange(config.num_slots), blocks.shape[:-1])
    occupied = blocks[..., int(SlotFeature.OCCUPIED)] > 0
    key = np.where(occupied, blocks[..., int(SlotFeature.TIME_LEFT)], np.inf)
    return np.argsort(key, axis=-1, kind="stable")


def listed_state(states: np.ndarray, listing: np.ndarray, config: EnvConfig) -> np.ndarray:
    """(…, D) states with their slot blocks in ``listing``'s order (`slot_listing`)."""
    listed = np.take_along_axis(_slot_blocks(states, config), listing[..., None], axis=-2)
    out = states.copy()
    out[..., _table(config)] = listed.reshape(*states.shape[:-1], -1)
    return out


def _table(config: EnvConfig) -> slice:
    """Where a state's slot blocks lie."""
    start = table_start(0, speed_columns(config))
    return slice(start, start + config.num_slots * slot_width(config))


def _slot_blocks(states: np.ndarray, config: EnvConfig) -> np.ndarray:
    """(…, K, F) the slot blocks of (…, D) states."""
    table = states[..., _table(config)]
    return table.reshape(*states.shape[:-1], config.num_slots, slot_width(config))
