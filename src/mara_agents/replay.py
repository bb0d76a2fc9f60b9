"""Episodes told by their actions: a compact log of what a scheduler did, and its replay.

A result row that carries its scheduler's joint actions (`encode_actions`, one row of M node
actions per decision) can be checked by anyone: the environment is deterministic given the
episode's config, seed and decision form, so replaying the actions (`replay`) gives the
episode's metrics again, bit for bit, for a stochastic scheduler too. Replays need no scheduler
and no predictor: estimates are only shown to schedulers, the dynamics never read them (a decision
form that waits on them, ``feasibility``, is refused).
"""

from __future__ import annotations

import base64
import hashlib
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from coreenv import BatchedCore, Decisions, EnvConfig

__all__ = ["decode_actions", "encode_actions", "episode_digest", "normalised_actions", "replay"]


def normalised_actions(actions: np.ndarray, num_slots: int) -> np.ndarray:
    """Node actions as the environment reads them: ``K`` idles, ``K + 1`` anything out of range."""
    actions = np.asarray(actions, np.int64)
    return np.where((actions >= 0) & (actions <= num_slots), actions, num_slots + 1)


def encode_actions(decisions: Sequence[np.ndarray], num_nodes: int) -> dict[str, Any]:
    """A JSON-able log of an episode's joint actions, one (M,) row per decision (normalised)."""
    table = np.asarray(decisions, np.int64).reshape(-1, num_nodes)
    dtype = np.uint8 if table.size == 0 or table.max() < 256 else np.uint16
    data = zlib.compress(table.astype(dtype).tobytes(), 9)
    return {
        "dtype": np.dtype(dtype).name,
        "shape": list(table.shape),
        "data": base64.b64encode(data).decode("ascii"),
    }


def decode_actions(log: Mapping[str, Any]) -> np.ndarray:
    """The (D, M) int64 joint actions of an `encode_actions` log."""
    try:
        raw = zlib.decompress(base64.b64decode(log["data"]))
        table = np.frombuffer(raw, np.dtype(log["dtype"])).reshape(log["shape"])
    except (KeyError, TypeError, ValueError, zlib.error) as e:
        raise ValueError(f"not an action log (dtype, shape, data): {e}") from None
    return table.astype(np.int64)


def episode_digest(config: EnvConfig, seed: int) -> str:
    """A digest of the episode a config and seed draw: every task and its loss curve.

    Two rows of the same digest played the same tasks, whatever the package version.
    """
    core = BatchedCore(config, 1)
    core.reset([seed])
    lanes = core.lanes
    n = len(lanes.curves[0])
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(lanes.task_ints[:, 0, :n]).tobytes())
    digest.update(np.ascontiguousarray(lanes.records[0, :n]).tobytes())
    for curve in lanes.curves[0]:
        digest.update(np.asarray(curve, np.float64).tobytes())
    return digest.hexdigest()[:16]


def replay(config: EnvConfig, seed: int, decisions: Decisions, actions: np.ndarray) -> dict:
    """The metrics of episode ``seed`` of ``config`` played by ``actions``, one row per decision.

    Raises ValueError if the log ends before the episode or goes on after it.
    """
    if decisions.feasibility:
        raise ValueError(
            "a decision form with feasibility waits on a predictor's estimates: its episodes "
            "cannot be replayed from actions alone."
        )
    core = BatchedCore(config, 1, None, decisions)
    core.reset([seed])
    for index, row in enumerate(actions):
        finished = core.step(row[None]).finished
        if finished:
            if index + 1 != len(actions):
                raise ValueError(
                    f"the episode ended at decision {index + 1} of the {len(actions)} logged."
                )
            return finished[0][2]
    raise ValueError(f"the {len(actions)} logged decisions end before the episode does.")
