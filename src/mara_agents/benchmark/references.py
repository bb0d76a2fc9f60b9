"""The shipped reference results: every built-in method's completion on every episode of a protocol.

A benchmark run places its methods against these without playing any built-in method again.
They are made by one command (``python benchmarks/make_references.py``), which plays the
protocol with `REFERENCE_METHODS` and keeps each episode's completion rate, cell by cell in seed
order; the suite replays a sample of them, so they cannot go stale.
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

import numpy as np

from mara_agents.benchmark.play import cell_of
from mara_agents.benchmark.protocol import Cell, Protocol

__all__ = ["REFERENCE_METHODS", "References", "cell_key", "load_references", "make_references"]

REFERENCE_METHODS = ("fifo", "edf", "random", "lara", "mara", "ppo", "oracle")
"""The built-in methods the references hold: the classic baselines, LARA, MARA, the RL baseline
and the Oracle (the normalised score's 0 is ``random``, its 1 the ``oracle``)."""

FOLDER = Path(__file__).resolve().parent / "references"


def cell_key(cell: Cell) -> str:
    """A cell's key in a references file."""
    return f"{cell.cluster}|{cell.task_set}|{cell.arrival_prob!r}"


class References:
    """Per method and cell, the completion rate of each episode (seeds in protocol order)."""

    def __init__(self, data: dict) -> None:
        self.data = data

    @property
    def methods(self) -> list[str]:
        """The methods held."""
        return list(self.data["methods"])

    def rates(self, method: str, cell: Cell, episodes: int) -> np.ndarray | None:
        """The first ``episodes`` completion rates of ``method`` in ``cell`` (None: not played)."""
        rates = self.data["methods"][method].get(cell_key(cell))
        return None if rates is None else np.asarray(rates[:episodes], float)


def make_references(rows: list[dict], protocol: Protocol, path: Path) -> None:
    """Write the references of a protocol run's result rows (`play_protocol`) to ``path``."""
    methods: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        cells = methods.setdefault(row["method"], {})
        cells.setdefault(cell_key(cell_of(row, protocol)), []).append(row["completion_rate"])
    commands = sorted({row["run"]["command"] for row in rows})  # one per run that played rows
    data = {"protocol": protocol.name, "coreenv": rows[0]["run"]["coreenv"], "commands": commands,
            "methods": methods}  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as file:
        json.dump(data, file)


@functools.cache
def load_references(name: str) -> References:
    """The shipped references of the protocol named ``name``."""
    path = FOLDER / f"{name}.json.gz"
    if not path.is_file():
        raise FileNotFoundError(f"no shipped references for {name} ({path}).")
    with gzip.open(path, "rt") as file:
        return References(json.load(file))
