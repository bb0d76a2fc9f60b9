"""Schedulers: `reset(env)` then `act(observations, infos) -> actions` every step.

`MARA` needs torch and is imported on first use, so ``from mara_agents.schedulers import FIFO``
stays a numpy-only import.
"""

from mara_agents.schedulers.base import Scheduler, serve_in_order
from mara_agents.schedulers.heuristics import EDF, FIFO, RandomScheduler
from mara_agents.schedulers.hop import HOP, HOPConfig
from mara_agents.schedulers.lara import LARA
from mara_agents.schedulers.oracle import Oracle

__all__ = [
    "EDF",
    "FIFO",
    "HOP",
    "HOPConfig",
    "LARA",
    "MARA",
    "Oracle",
    "RandomScheduler",
    "Scheduler",
    "serve_in_order",
]


def __getattr__(name: str):
    """`MARA` is imported on first use (it needs torch)."""
    if name == "MARA":
        from mara_agents.schedulers.mara import MARA

        return MARA
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
