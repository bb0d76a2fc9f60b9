"""Calibration: a monotone map of the success share and the point-estimate level, fitted."""

import numpy as np
import pytest

pytest.importorskip("sklearn")
torch = pytest.importorskip("torch")

from mara_agents.predictors.calibration import (  # noqa: E402
    LEVELS,
    Calibration,
    fit_calibration,
    point_estimates,
)
from mara_agents.predictors.flow import FMConfig, FMPredictor, VelocityNet  # noqa: E402
from mara_agents.predictors.queries import reliability  # noqa: E402


def pessimistic_queries(n=4000, samples=32, seed=0):
    """Sampled crossings twice as slow as the truth, which is ~ exponential around 100 batches."""
    rng = np.random.default_rng(seed)
    scale = rng.uniform(50, 150, n)
    truth = np.ceil(rng.exponential(scale))
    crossings = np.ceil(2 * rng.exponential(scale[:, None], (n, samples)))
    budgets = rng.integers(50, 300, n)
    share = np.mean(crossings <= budgets[:, None], axis=1)
    return share, truth <= budgets, crossings, truth


def test_a_fitted_calibration_removes_a_pessimistic_bias_and_lowers_the_level():
    share, success, crossings, truth = pessimistic_queries()
    calibration = fit_calibration(share, success, crossings, truth)
    assert np.all(np.diff(calibration.values) >= 0) and calibration.level < 0.5
    assert calibration.level in LEVELS
    fresh = pessimistic_queries(seed=1)
    calibrated = calibration.p_success(fresh[0])
    assert reliability(calibrated, fresh[1]).calibration_error < 0.03
    assert reliability(fresh[0], fresh[1]).calibration_error > 0.1
    mae = [
        np.mean(np.abs(point_estimates(fresh[2], level) - fresh[3]))
        for level in (0.5, calibration.level)
    ]
    assert mae[1] < mae[0]


def test_point_estimates_are_sampled_crossings():
    crossings = np.array([[4.0, 6.0, 1.0, np.inf], [np.inf, np.inf, np.inf, 3.0]])
    np.testing.assert_array_equal(point_estimates(crossings, 0.25), [1.0, 3.0])
    np.testing.assert_array_equal(point_estimates(crossings, 0.5), [4.0, np.inf])


@pytest.mark.parametrize(
    ("knots", "values", "level"),
    [
        ([0.1, 1.0], [0.0, 1.0], 0.5),  # does not start at 0
        ([0.0, 1.0], [0.8, 0.2], 0.5),  # decreasing
        ([0.0, 1.0], [0.0, 1.5], 0.5),  # not a probability
        ([0.0, 1.0], [0.0, 1.0], 1.0),  # level outside (0, 1)
    ],
)
def test_a_bad_calibration_is_refused(knots, values, level):
    with pytest.raises(ValueError, match="Calibration"):
        Calibration(np.array(knots), np.array(values), level)


def test_a_calibrated_predictor_reads_its_samples_through_it_and_saves_it(tmp_path):
    config = FMConfig(horizon=20, recent=2, spread=2, hidden=8, context_dim=4, time_dim=4)
    raw = FMPredictor(VelocityNet(config))
    calibration = Calibration(np.array([0.0, 0.5, 1.0]), np.array([0.3, 0.6, 0.9]), 0.25)
    calibrated = FMPredictor(raw.net, calibration=calibration)
    prefixes = [2.0 * (1.0 + np.arange(n + 1.0)) ** -0.5 for n in (5, 9, 14)]
    targets = np.array([p[-1] * 0.95 for p in prefixes])
    budgets = np.array([3, 10, 20])
    sampled = raw.sampled_crossings(prefixes, targets)
    remaining, p_success = calibrated.estimate_batch(prefixes, targets, budgets)
    np.testing.assert_array_equal(remaining, point_estimates(sampled, 0.25))
    share = np.mean(sampled <= budgets[:, None], axis=1)
    np.testing.assert_allclose(p_success, np.interp(share, [0, 0.5, 1], [0.3, 0.6, 0.9]))
    calibrated.save(tmp_path / "fm.pt")
    loaded = FMPredictor.pretrained(tmp_path / "fm.pt")
    assert loaded.calibration.level == 0.25
    np.testing.assert_array_equal(loaded.calibration.values, calibration.values)
    np.testing.assert_array_equal(loaded.estimate_batch(prefixes, targets, budgets)[1], p_success)
