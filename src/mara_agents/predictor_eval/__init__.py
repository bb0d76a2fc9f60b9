"""Predictor evaluation: query protocols, their scores and the reports of `coreenv eval-predictors`.

- `queries`: queries drawn on a bank's runs as the environment or a user asks them, and every
  predictor's score on them (capped MAE, success accuracy, calibration, ROC AUC, latency);
- `report`: the scores of several predictors on several groups of runs, as tables and a plot;
- `history`: the same queries asked with histories of k finished tasks of their kind, for every
  k (how a predictor that reads context improves as tasks of a kind finish);
- `history_report`: those scores as a table per predictor and k, and CSV rows.
"""

from mara_agents.predictor_eval.history import HistoryConfig, HistoryResults, score_history
from mara_agents.predictor_eval.queries import (
    PredictorScore,
    QueryConfig,
    make_queries,
    score_banks,
    score_predictor,
)

__all__ = [
    "HistoryConfig",
    "HistoryResults",
    "PredictorScore",
    "QueryConfig",
    "make_queries",
    "score_banks",
    "score_history",
    "score_predictor",
]
