"""The calibration's fit: the blend, level and reading chosen for the worst held-out family."""

import numpy as np
import pytest

pytest.importorskip("sklearn")

from mara_agents.fm_training.calibration_fit import (  # noqa: E402
    LEVELS,
    REACH_EDGES,
    READINGS,
    WLS_WEIGHTS,
    OutOfFamily,
    family_ratios,
    fit_calibration,
)
from mara_agents.predictor_eval.queries import reliability  # noqa: E402
from mara_agents.predictors.calibration import Calibration, point_estimates  # noqa: E402


def pessimistic_queries(n=4000, samples=32, seed=0):
    """Sampled crossings twice as slow as the truth (~ exponential around 100 batches), and a WLS
    estimate that is close on family "b" and far off on family "a"."""
    rng = np.random.default_rng(seed)
    scale = rng.uniform(50, 150, n)
    truth = np.ceil(rng.exponential(scale))
    crossings = np.ceil(2 * rng.exponential(scale[:, None], (n, samples)))
    family = np.where(np.arange(n) % 2 == 0, "a", "b")
    wls = np.where(family == "b", truth * rng.lognormal(0, 0.2, n), 4 * truth + 50)
    return OutOfFamily(family, crossings, wls, rng.integers(50, 300, n), truth)


def test_a_fitted_calibration_removes_a_pessimistic_bias():
    data = pessimistic_queries()
    calibration = fit_calibration(data)
    assert np.all(np.diff(calibration.values) >= 0)
    fresh = pessimistic_queries(seed=1)
    calibrated = calibration.p_success(fresh.crossings, fresh.budgets, fresh.wls)
    assert reliability(calibrated, fresh.success).calibration_error < 0.03
    assert reliability(fresh.share, fresh.success).calibration_error > 0.1


def test_the_blend_is_chosen_for_the_worst_family():
    data = pessimistic_queries()
    calibration = fit_calibration(data)
    # FM alone is best on family "a" (WLS is far off there) but WLS is close on family "b", where
    # FM is five times worse: the worst family asks for the most WLS in the blend
    assert calibration.level in LEVELS and calibration.wls_weight == max(WLS_WEIGHTS)


def near_and_far_queries(n=3000, samples=32, seed=0):
    """Near targets where FM's samples are right and WLS is far off; far targets where the
    samples are twice too slow (mostly past H) and WLS is right: no one blend suits both."""
    rng = np.random.default_rng(seed)
    far = np.arange(n) % 2 == 1
    truth = np.where(far, rng.uniform(250, 450, n), rng.uniform(10, 40, n)).round()
    crossings = np.ceil(
        np.where(far, 2.0, 1.0)[:, None] * truth[:, None] * rng.lognormal(0, 0.1, (n, samples))
    )
    crossings[crossings > 500] = np.inf
    wls = np.where(far, truth * rng.lognormal(0, 0.05, n), 4 * truth + 50)
    return OutOfFamily(np.full(n, "a"), crossings, wls, rng.integers(50, 300, n), truth)


def test_far_targets_get_a_blend_of_their_own():
    data = near_and_far_queries()
    assert fit_calibration(data).farther == ()  # only when asked for
    calibration = fit_calibration(data, reach_edges=REACH_EDGES)
    reaches = [reach for reach, _, _ in calibration.farther]
    assert reaches == list(REACH_EDGES)
    near_weight, far_weight = calibration.wls_weight, calibration.farther[-1][2]
    assert near_weight == 0.0 and far_weight == max(WLS_WEIGHTS)  # FM near, mostly WLS far
    single = Calibration(calibration.knots, calibration.values, calibration.level, 0.0)
    banded = family_ratios(near_and_far_queries(seed=1), calibration)["a"]
    assert banded < 0.5 * family_ratios(near_and_far_queries(seed=1), single)["a"]


def test_the_reading_of_the_samples_that_corrects_them_is_chosen():
    data = pessimistic_queries()
    rng = np.random.default_rng(2)
    truth = np.maximum(data.remaining, 1.0)[:, None]
    corrected = np.ceil(truth * rng.lognormal(0.0, 0.1, data.crossings.shape))  # close to it
    worse = 3 * corrected
    readings = np.stack([corrected if r == (True, 0.5) else worse for r in READINGS], axis=1)
    calibration = fit_calibration(
        OutOfFamily(data.family, data.crossings, data.wls, data.budgets, data.remaining, readings)
    )
    assert (calibration.denoise, calibration.backtest) == (True, 0.5)
    raw = fit_calibration(data)  # without the other readings' crossings: never chosen
    assert (raw.denoise, raw.backtest) == (False, 0.0)


def test_family_ratios_are_each_familys_mae_over_wlss_under_the_calibrations_reading():
    from mara_agents.fm_training.calibration_fit import family_ratios

    data = pessimistic_queries(n=400)
    calibration = Calibration(np.array([0.0, 1.0]), np.array([0.0, 1.0]), 0.5, 0.0)
    ratios = family_ratios(data, calibration)
    truth = np.minimum(data.remaining, 500)
    mine = np.abs(np.minimum(point_estimates(data.crossings, 0.5), 500) - truth)
    wls = np.abs(np.minimum(data.wls, 500) - truth)
    for family in ("a", "b"):
        rows = data.family == family
        assert ratios[family] == pytest.approx(mine[rows].mean() / wls[rows].mean())
