"""The observation's feature layout (design §2)."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from coreenv.config import EnvConfig

__all__ = [
    "GLOBAL_FEATURES",
    "NO_PREDICTOR",
    "OBS_BOUND",
    "QUANTILES",
    "SlotFeature",
    "CLUSTER_FEATURES",
    "category_columns",
    "cluster_columns",
    "entering_rows",
    "estimate_columns",
    "observation_size",
    "slot_tables",
    "slot_width",
    "speed_columns",
    "table_start",
]

OBS_BOUND = 1000.0  # every feature lies in [-OBS_BOUND, OBS_BOUND]; unbounded ones are clipped

NO_PREDICTOR = -1.0
"""Every estimate feature of an occupied slot when no predictor is attached: never a real value."""

GLOBAL_FEATURES = ("time", "waiting", "spare_nodes")
"""t / arrival_horizon, waiting tasks / K, nodes beyond the occupied slots / M; then, once
`EnvConfig.cluster_shown`, each node's speed (`speed_columns`)."""

CLUSTER_FEATURES = ("last_node", "resume_cost")
"""Slot columns once `EnvConfig.cluster_shown`: (i + 1) / M for the node i that last trained the
task (0: none yet), and the steps it would lose resumed there at the next step / time_scale."""


class SlotFeature(IntEnum):
    """Columns of a slot's feature block.

    Time-like columns are divided by ``time_scale`` (the longest deadline window, in steps; batch
    counts also by ``batches_per_step``).
    """

    OCCUPIED = 0  # 1 if the slot holds a task
    LOG_LOSS = 1  # log(L / L_0) of the last revealed loss
    LOG_TARGET = 2  # log(epsilon / L_0)
    TIME_LEFT = 3  # (d_k - t) / time_scale
    BATCHES = 4  # n_k / (B * time_scale)
    PROGRESS = 5  # log-progress q_k = clip(log(L_0 / max(L, eps)) / log(L_0 / eps), 0, 1)
    READY = 6  # 1 once n_k >= W_min
    EST_REMAINING = 7  # predictor's remaining batches / (B * time_scale); 0 until ready
    EST_P_SUCCESS = 8  # predictor's P(success within the deadline); 0 until ready
    # then one column per level of EnvConfig.estimate_quantiles: the predictor's quantile of the
    # remaining batches / (B * time_scale), 0 until ready. Without an attached predictor every
    # estimate column reads NO_PREDICTOR (-1) in every occupied slot. Then, once
    # EnvConfig.cluster_shown, the CLUSTER_FEATURES. Then, once EnvConfig.information is not
    # "prefix", one column per EnvConfig.kind_fields: the task's category id for that field
    # within its episode (`coreenv.context.category_ids`)


QUANTILES = len(SlotFeature)
"""The slot column of the first quantile level (`EnvConfig.estimate_quantiles`)."""


def slot_width(config: EnvConfig) -> int:
    """F, the columns of a slot block: `SlotFeature`s, a column per quantile level, the cluster's
    columns, categories."""
    return cluster_columns(config).stop + category_columns(config)


def cluster_columns(config: EnvConfig) -> slice:
    """The slot columns of the `CLUSTER_FEATURES`, after the estimates (empty if not shown)."""
    start = estimate_columns(config).stop
    return slice(start, start + (len(CLUSTER_FEATURES) if config.cluster_shown else 0))


def speed_columns(config: EnvConfig) -> int:
    """The node-speed columns after the `GLOBAL_FEATURES`: M once the cluster is shown, else 0."""
    return config.num_nodes if config.cluster_shown else 0


def category_columns(config: EnvConfig) -> int:
    """C, the category-id columns at the end of a slot block (0 at ``information="prefix"``)."""
    return 0 if config.information == "prefix" else len(config.kind_fields)


def estimate_columns(config: EnvConfig) -> slice:
    """The slot columns a predictor writes: EST_REMAINING, EST_P_SUCCESS and the quantiles."""
    return slice(int(SlotFeature.EST_REMAINING), QUANTILES + len(config.estimate_quantiles))


def table_start(num_nodes: int, speeds: int = 0) -> int:
    """Where the slot blocks of a node's observation start: after its one-hot id, the globals
    and ``speeds`` node-speed columns (`speed_columns`).

    ``table_start(0, speeds)``: where they start in the state vector, which has no id.
    """
    return num_nodes + len(GLOBAL_FEATURES) + speeds


def slot_tables(obs: np.ndarray, num_nodes: int, slot_width: int, speeds: int = 0) -> np.ndarray:
    """(B, K, F) slot tables of (B, M, D) node observations (node 0's: every node sees them).

    ``speeds``: the node-speed columns the observations hold (`speed_columns`).
    """
    start = table_start(num_nodes, speeds)
    return obs[:, 0, start:].reshape(obs.shape[0], -1, slot_width)


def observation_size(config: EnvConfig) -> int:
    """D, the length of a node's observation: one-hot id, globals, speeds, then K slot blocks."""
    start = table_start(config.num_nodes, speed_columns(config))
    return start + config.num_slots * slot_width(config)


def entering_rows(
    rows: np.ndarray,
    log_initial: np.ndarray | float,
    log_target: np.ndarray | float,
    estimates: slice,
    estimate: float,
    categories: np.ndarray | None,
) -> None:
    """Write the feature rows of tasks entering slots (their records, `Lanes`).

    Occupied, their log target ``log(epsilon / L_0)``, the ``estimates`` columns
    (`estimate_columns`) at ``estimate`` (0, or NO_PREDICTOR without a predictor), the (n, C)
    ``categories`` in the last C columns if given, the rest 0 (nothing trained yet, on no node).
    """
    rows[...] = 0.0
    rows[..., SlotFeature.OCCUPIED] = 1.0
    rows[..., SlotFeature.LOG_TARGET] = log_target - log_initial
    rows[..., estimates] = estimate
    if categories is not None and categories.shape[-1]:
        rows[..., -categories.shape[-1] :] = categories
