"""Predictor evaluation: query protocols, their scores and the reports of `coreenv eval-predictors`.

- `queries`: queries drawn on a bank's runs as the environment or a user asks them, and every
  predictor's score on them (capped MAE, success accuracy, calibration, ROC AUC, latency);
- `report`: the scores of several predictors on several groups of runs, as tables and a plot.
"""

from mara_agents.predictor_eval.queries import (
    PredictorScore,
    QueryConfig,
    make_queries,
    score_banks,
    score_predictor,
)

__all__ = [
    "PredictorScore",
    "QueryConfig",
    "make_queries",
    "score_banks",
    "score_predictor",
]
