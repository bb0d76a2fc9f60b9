"""mara_agents: schedulers (FIFO, EDF, random, clairvoyant oracle, …) and their evaluation."""

from mara_agents import compat, schedulers
from mara_agents.evaluation import evaluate, run_episode

compat.install()  # old module paths, deprecated until 0.3.0

__all__ = ["evaluate", "run_episode", "schedulers"]
