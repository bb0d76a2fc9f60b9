"""Remaining-demand predictors implementing `coreenv.Predictor`."""

from mara_agents.predictors.wls import WLSConfig, WLSPredictor

__all__ = ["WLSConfig", "WLSPredictor"]
