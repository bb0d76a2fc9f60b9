"""Recorded training runs: the families, their models and data, and the code that trains them.

Shared by `benchmarks/make_curve_bank.py` (which records the bundled curve bank) and the `live`
curve source (which trains a run one batch per served step). Needs the ``agents`` extra.
"""

from mara_agents.curvegen.specs import FAMILIES, GROUPS, Family, RunSpec, plan_runs

__all__ = ["FAMILIES", "GROUPS", "Family", "RunSpec", "curve_of", "plan_runs"]


def curve_of(spec: RunSpec):
    """Train ``spec`` and return its loss curve (validation loss, or RL loss; see the modules)."""
    if FAMILIES[spec.family].reinforcement:
        from mara_agents.curvegen.rl import rl_curve

        return rl_curve(spec)
    from mara_agents.curvegen.supervised import supervised_curve

    return supervised_curve(spec)
