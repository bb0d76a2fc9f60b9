"""mara_agents: schedulers (FIFO, EDF, random, clairvoyant oracle, …) and their evaluation."""

from mara_agents import schedulers
from mara_agents.evaluation import evaluate, run_episode

__all__ = ["evaluate", "run_episode", "schedulers"]
