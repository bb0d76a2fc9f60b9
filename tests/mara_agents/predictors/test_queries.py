"""The query protocol: bounds from the environment, draws a task could be, exact scores."""

import numpy as np
import pytest

from coreenv import EnvConfig
from coreenv.curves import named_task_set
from mara_agents.predictors import ClairvoyantPredictor, WLSPredictor
from mara_agents.predictors.queries import (
    PredictorScore,
    QueryConfig,
    compare_scores,
    make_queries,
    reliability,
    score_predictor,
)


def test_query_bounds_are_the_environments_defaults():
    env = EnvConfig()
    config = QueryConfig()
    assert config.min_prefix == env.min_prefix
    assert config.budget == env.deadline_window
    assert config.target_fraction == env.target_fraction


def test_queries_are_ready_unfinished_tasks_within_the_deadline_window():
    bank = named_task_set("vit_ood").subset(np.arange(12))
    config = QueryConfig(per_curve=3, min_prefix=15, budget=(20, 30))
    queries = make_queries(bank, config)
    assert 0 < len(queries) <= 36
    lengths = np.array([len(p) - 1 for p in queries.prefixes])
    assert np.all(lengths >= 15) and np.all(queries.remaining >= 1)
    assert np.all((queries.budgets >= 20) & (queries.budgets <= 30))
    again = make_queries(bank, config)
    np.testing.assert_array_equal(again.targets, queries.targets)


def test_the_truth_scores_perfectly():
    bank = named_task_set("vit_ood").subset(np.arange(8))
    queries = make_queries(bank, QueryConfig(per_curve=2))
    score = score_predictor(ClairvoyantPredictor(bank), queries)
    assert (score.capped_mae, score.success_accuracy, score.queries) == (0.0, 1.0, len(queries))
    assert score_predictor(WLSPredictor(), queries).capped_mae > 0


def score(capped_mae, success_accuracy, latency_ms):
    diagram = reliability(np.array([0.5]), np.array([1.0]))
    return PredictorScore(capped_mae, success_accuracy, 0.5, 0.8, latency_ms, 10, diagram)


def test_a_score_compared_with_a_baseline():
    baseline = score(capped_mae=100.0, success_accuracy=0.6, latency_ms=0.5)
    better = score(capped_mae=25.0, success_accuracy=0.9, latency_ms=2.0)
    comparison = compare_scores(better, baseline)
    assert comparison.mae_reduction == 0.75 and comparison.latency_ratio == 4.0
    assert comparison.accuracy_gain == pytest.approx(0.3)


def test_calibration_error_weighs_each_bins_gap_by_its_share():
    # bin [0.1, 0.2): predicted 0.15, observed 1/2; bin [0.9, 1.0]: predicted 0.95 and 1.0, all 1
    probabilities = np.array([0.1, 0.2 - 1e-9, 0.9, 1.0])
    outcomes = np.array([0.0, 1.0, 1.0, 1.0])
    diagram = reliability(probabilities, outcomes)
    assert diagram.count.tolist() == [0, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert diagram.observed[1] == 0.5 and diagram.observed[9] == 1.0
    expected = 0.5 * abs(0.15 - 0.5) + 0.5 * abs(0.95 - 1.0)
    assert diagram.calibration_error == pytest.approx(expected)
    assert np.isnan(diagram.predicted[0])  # an empty bin


def test_a_calibrated_predictor_scores_a_small_error_and_a_biased_one_a_large_error():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=20_000)
    outcome = rng.uniform(size=p.size) < p
    assert reliability(p, outcome).calibration_error < 0.02
    assert reliability(p, outcome).calibration_error < reliability(p / 2, outcome).calibration_error
    assert reliability(p / 2, outcome).calibration_error == pytest.approx(0.25, abs=0.02)


def test_reliability_refuses_mismatched_inputs():
    with pytest.raises(ValueError, match="as many outcomes as probabilities"):
        reliability(np.array([0.5, 0.2]), np.array([1.0]))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"per_curve": 0}, "per_curve >= 1"),
        ({"target_fraction": (0.5, 0.2)}, "target_fraction"),
        ({"budget": (10, 5)}, "budget"),
    ],
)
def test_bad_query_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        QueryConfig(**fields)
