"""Schedulers: `reset(env)` then `act(observations, infos) -> actions` every step."""

from mara_agents.schedulers.base import Scheduler, serve_in_order
from mara_agents.schedulers.heuristics import EDF, FIFO, RandomScheduler
from mara_agents.schedulers.lara import LARA
from mara_agents.schedulers.oracle import Oracle

__all__ = ["EDF", "FIFO", "LARA", "Oracle", "RandomScheduler", "Scheduler", "serve_in_order"]
