"""Rendering: an ANSI slot table and a Gantt-style picture of node assignments over time."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from coreenv.core.engine import EMPTY
from coreenv.core.features import SlotFeature, slot_tables, slot_width, speed_columns
from coreenv.core.views import SchedulerView

__all__ = ["GANTT_STEPS", "Rendering", "ansi_table", "gantt"]

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


def ansi_table(
    view: SchedulerView, metrics: dict[str, float], served: np.ndarray, agents: list[str]
) -> str:
    """A readable table of one episode's slots: who is there, how far along, who served it.

    ``served``: (M,) the task each node trained last step (EMPTY: idle or not recorded).
    """
    config = view.configs[0]
    table = slot_tables(view.obs, config.num_nodes, slot_width(config), speed_columns(config))[0]
    lines = [
        f"t={view.t[0]}  arrivals={metrics['arrivals']}  successes={metrics['successes']}  "
        f"failures={metrics['failures']}  waiting={view.waiting[0]}",
        f"{'slot':>4} {'task':>5} {'arrived':>7} {'deadline':>8} {'batches':>7} "
        f"{'loss':>9} {'target':>9} {'q':>5} {'ready':>5}  served by",
    ]
    for j, present in enumerate(view.occupied[0].tolist()):
        if not present:
            lines.append(f"{j:>4} {'-':>5}")
            continue
        uid, batches, target = int(view.uid[0, j]), int(view.batches[0, j]), view.target[0, j]
        losses = view.prefix(0, j)
        nodes = [a for a, task in zip(agents, served.tolist()) if task == uid]
        ready = "yes" if batches >= config.min_prefix else "no"
        lines.append(
            f"{j:>4} {'#' + str(uid):>5} {view.arrival[0, j]:>7} {view.deadline[0, j]:>8} "
            f"{batches:>7} {float(losses[-1]):>9.4g} {target:>9.4g} "
            f"{table[j, SlotFeature.PROGRESS]:>5.2f} {ready:>5}  {', '.join(nodes) or '-'}"
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


class Rendering:
    """Who served whom in one episode, drawn as a ``render_mode`` asks (`CoreEnv`'s modes).

    The shells of one episode hand `watched` to their core (`BatchedCore.watch`), and ``table``
    makes their slot table as text (`ansi_table` of their view).
    """

    def __init__(self, mode: str | None, num_nodes: int, table: Callable[[], str]) -> None:
        self.mode, self.num_nodes, self.table = mode, num_nodes, table
        self.served = np.full(num_nodes, EMPTY)  # the task each node trained last
        self.history: list[np.ndarray] = []  # what they trained, step by step

    def restart(self) -> None:
        """A new episode: nothing served yet."""
        self.served = np.full(self.num_nodes, EMPTY)
        self.history = []

    def watched(self, served: np.ndarray) -> None:
        """A step was played: (1, M) the task each node trained; printed in ``"human"`` mode."""
        self.served = served[0]
        self.history.append(self.served)
        if self.mode == "human":
            print(self.table(), end="\n\n")

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the slot table; ``rgb_array``: a Gantt picture of the last steps;
        ``human``: prints the table."""
        if self.mode == "ansi":
            return self.table()
        if self.mode == "rgb_array":
            return gantt(self.history, self.num_nodes)
        if self.mode == "human":
            print(self.table())
        return None
