"""Learned allocation policies (torch)."""

from mara_agents.policy.mat import MAT, MATConfig, PolicyOutput

__all__ = ["MAT", "MATConfig", "PolicyOutput"]
