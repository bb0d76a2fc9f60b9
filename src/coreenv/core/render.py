"""Rendering: an ANSI slot table and a Gantt-style picture of node assignments over time."""

from __future__ import annotations

import numpy as np

from coreenv.config import EnvConfig
from coreenv.core.state import EMPTY, State

__all__ = ["GANTT_STEPS", "ansi_table", "gantt"]

GANTT_STEPS = 300  # the picture shows the most recent steps
_ROW, _GAP, _COL = 14, 2, 2  # pixels: row height, gap between nodes, width of one step
_IDLE = np.array([235, 235, 235], np.uint8)
_PALETTE = np.array(  # tab20-like colours, one per task id modulo 20
    [
        [31, 119, 180],
        [174, 199, 232],
        [255, 127, 14],
        [255, 187, 120],
        [44, 160, 44],
        [152, 223, 138],
        [214, 39, 40],
        [255, 152, 150],
        [148, 103, 189],
        [197, 176, 213],
        [140, 86, 75],
        [196, 156, 148],
        [227, 119, 194],
        [247, 182, 210],
        [127, 127, 127],
        [199, 199, 199],
        [188, 189, 34],
        [219, 219, 141],
        [23, 190, 207],
        [158, 218, 229],
    ],
    np.uint8,
)


def ansi_table(state: State, config: EnvConfig, agents: list[str]) -> str:
    """A readable table of the slots: who is there, how far along, and which node served it."""
    c = state.counters
    lines = [
        f"t={state.t}  arrivals={c.arrivals}  successes={c.successes}  failures={c.failures}  "
        f"waiting={len(state.waiting)}",
        f"{'slot':>4} {'task':>5} {'arrived':>7} {'deadline':>8} {'batches':>7} "
        f"{'loss':>9} {'target':>9} {'q':>5} {'ready':>5}  served by",
    ]
    for j, task in enumerate(state.tasks):
        if task is None:
            lines.append(f"{j:>4} {'-':>5}")
            continue
        nodes = [a for a, uid in zip(agents, state.served) if uid == task.uid]
        ready = "yes" if state.cursor[j] >= config.min_prefix else "no"
        lines.append(
            f"{j:>4} {'#' + str(task.uid):>5} {task.arrival:>7} {task.deadline:>8} "
            f"{state.cursor[j]:>7} {state.loss[j]:>9.4g} {task.target:>9.4g} "
            f"{state.progress[j]:>5.2f} {ready:>5}  {', '.join(nodes) or '-'}"
        )
    return "\n".join(lines)


def gantt(history: list[np.ndarray], num_nodes: int) -> np.ndarray:
    """(H, W, 3) uint8: one row per node, one column per step, coloured by the task it trained.

    Args:
        history: per step, the (M,) task uids the nodes trained (-1 idle).
        num_nodes: M.
    """
    recent = history[-GANTT_STEPS:] or [np.full(num_nodes, EMPTY)]
    uids = np.stack(recent, axis=1)  # (M, steps)
    colours = np.where((uids == EMPTY)[..., None], _IDLE, _PALETTE[uids % len(_PALETTE)])
    rows = np.repeat(np.repeat(colours, _COL, axis=1), _ROW, axis=0)  # (M * _ROW, steps * _COL, 3)
    image = np.full((num_nodes * (_ROW + _GAP) + _GAP, rows.shape[1], 3), 255, np.uint8)
    for i in range(num_nodes):
        top = _GAP + i * (_ROW + _GAP)
        image[top : top + _ROW] = rows[i * _ROW : (i + 1) * _ROW]
    return image
