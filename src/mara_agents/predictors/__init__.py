"""Remaining-demand predictors implementing `coreenv.Predictor`."""

from mara_agents.predictors.clairvoyant import ClairvoyantPredictor
from mara_agents.predictors.wls import WLSConfig, WLSPredictor

__all__ = ["ClairvoyantPredictor", "FMPredictor", "WLSConfig", "WLSPredictor"]


def __getattr__(name: str):
    """`FMPredictor` is imported on first use: it needs torch, the others only numpy."""
    if name == "FMPredictor":
        from mara_agents.predictors.flow import FMPredictor

        return FMPredictor
    raise AttributeError(name)
