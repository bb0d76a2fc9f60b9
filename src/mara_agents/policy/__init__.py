"""Learned allocation policies (torch), and the arrays they read from an observation dict."""

from mara_agents.policy.greedy import GreedyMAT
from mara_agents.policy.mat import MAT, ActionScores, MATConfig, PolicyOutput
from mara_agents.policy.observations import NodeObservations, stack_observations

__all__ = [
    "MAT",
    "ActionScores",
    "GreedyMAT",
    "MATConfig",
    "NodeObservations",
    "PolicyOutput",
    "stack_observations",
]
