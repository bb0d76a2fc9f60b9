"""The eval-predictors report: its tables name the worst fold, its files hold one row per score."""

import csv
import math

import numpy as np
import pytest

from mara_agents.predictor_eval.queries import PredictorScore, QueryConfig, reliability
from mara_agents.predictor_eval.report import COLUMNS, TARGET_RATIO, report, write_reports


def score(mae: float, accuracy: float) -> PredictorScore:
    """A score with the given MAE and accuracy (the other fields fixed)."""
    diagram = reliability(np.array([0.2, 0.8]), np.array([False, True]))
    return PredictorScore(mae, accuracy, 0.1, 0.5, 1.0, 10, diagram, math.nan)


def folds() -> dict:
    return {
        ("fold a", "wls"): score(100.0, 0.6),
        ("fold a", "fm"): score(50.0, 0.7),  # ratio 0.5, more accurate: meets the target
        ("fold b", "wls"): score(100.0, 0.6),
        ("fold b", "fm"): score(90.0, 0.7),  # ratio 0.9: the worst
    }


def test_a_folded_report_names_the_worst_fold_and_how_many_meet_the_target():
    text = report(folds(), QueryConfig(), folded=True)
    assert "| fold a | fm | 10 | 50.0 | 70.0 | 50.0 | 0.100 | n/a | 1.00 |" in text
    assert "worst fold: b (FM MAE / WLS MAE 0.90); 1 of 2 folds meet MAE ratio" in text
    assert f"<= {TARGET_RATIO}" in text
    assert "worst fold" not in report(folds(), QueryConfig())


def test_written_reports_hold_one_csv_row_per_score_and_kind_of_queries(tmp_path):
    pytest.importorskip("matplotlib")
    tables = {
        "environment": (folds(), "table one"),
        "user": (folds(), "table two"),
    }
    write_reports(tables, tmp_path)
    with (tmp_path / "predictors.csv").open() as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == COLUMNS and len(rows) == 1 + 8
    assert (tmp_path / "predictors.md").read_text() == "table one\n\ntable two\n"
    assert (tmp_path / "reliability-user.png").stat().st_size > 0
