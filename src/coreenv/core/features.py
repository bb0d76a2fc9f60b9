"""The observation's feature layout (design §2)."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["GLOBAL_FEATURES", "NO_PREDICTOR", "OBS_BOUND", "SlotFeature"]

OBS_BOUND = 1000.0  # every feature lies in [-OBS_BOUND, OBS_BOUND]; unbounded ones are clipped

NO_PREDICTOR = -1.0
"""Both estimate features of an occupied slot when no predictor is attached: never a real value."""

GLOBAL_FEATURES = ("time", "waiting", "spare_nodes")
"""t / arrival_horizon, waiting tasks / K, nodes beyond the occupied slots / M."""


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
    # without an attached predictor both read NO_PREDICTOR (-1) in every occupied slot
