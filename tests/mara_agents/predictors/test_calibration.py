"""Calibration as the predictor reads it, and the shipped networks by name."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mara_agents.predictors.calibration import Calibration, blend, point_estimates  # noqa: E402
from mara_agents.predictors.flow import FMPredictor  # noqa: E402
from mara_agents.predictors.flow_model import FMConfig, VelocityNet, task_features  # noqa: E402
from mara_agents.predictors.wls import WLSPredictor  # noqa: E402


def test_a_blend_is_geometric_and_past_the_horizon_is_inf():
    np.testing.assert_allclose(blend(np.array([100.0]), np.array([400.0]), 0.5), [200.0])
    assert blend(np.array([np.inf]), np.array([np.inf]), 0.3)[0] == np.inf
    np.testing.assert_allclose(blend(np.array([7.0]), np.array([np.inf]), 0.3), [7.0])  # no WLS
    assert blend(np.array([np.inf]), np.array([300.0]), 0.5)[0] == pytest.approx(np.sqrt(501 * 300))


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
    with pytest.raises(ValueError, match="Calibration.wls_weight must be in"):
        Calibration(np.array([0.0, 1.0]), np.array([0.0, 1.0]), 0.5, 1.0)


def test_each_band_reads_its_own_level_and_weight():
    calibration = Calibration(
        np.array([0.0, 1.0]), np.array([0.0, 1.0]), 0.5, 0.0, farther=((50.0, 0.25, 0.5),)
    )
    crossings = np.array([[8.0, 10.0, 12.0, 14.0], [60.0, 100.0, 120.0, 140.0]])
    wls = np.array([400.0, 400.0])
    np.testing.assert_allclose(calibration.remaining(crossings, wls), [10.0, np.sqrt(60.0 * 400.0)])


def test_a_far_band_that_blends_wls_makes_the_predictor_read_it():
    config = FMConfig(horizon=20, recent=2, spread=2, hidden=8, context_dim=4, time_dim=4)
    raw = FMPredictor(VelocityNet(config))
    prefixes = [2.0 * (1.0 + np.arange(n + 1.0)) ** -0.5 for n in (5, 9, 14)]
    targets = np.array([p[-1] * 0.9 for p in prefixes])
    budgets = np.array([10, 10, 10])
    sampled = raw.sampled_crossings(prefixes, targets)
    wls, _ = WLSPredictor().estimate_batch(prefixes, targets, budgets)
    # no WLS in the near blend, all of it past a reach of 0+: every task is in the far band
    farther = ((1e-9, 0.5, 0.5),)
    calibration = Calibration(np.array([0.0, 1.0]), np.array([0.0, 1.0]), 0.5, 0.0, farther=farther)
    assert (
        calibration.reads_wls
        and not Calibration(np.array([0.0, 1.0]), np.array([0.0, 1.0])).reads_wls
    )
    remaining, _ = FMPredictor(raw.net, calibration=calibration).estimate_batch(
        prefixes, targets, budgets
    )
    median = np.minimum(point_estimates(sampled, 0.5), 21.0)
    expected = np.sqrt(median * np.where(np.isfinite(wls), wls, median))  # FM alone without WLS
    expected[expected > 20] = np.inf
    np.testing.assert_allclose(remaining, expected)


@pytest.mark.parametrize(
    ("farther", "message"),
    [
        (((200.0, 0.5, 0.2), (50.0, 0.5, 0.2)), "positive, increasing reaches"),
        (((50.0, 0.5),), "triples"),
        (((),), "triples"),
        (((np.inf, 0.5, 0.2),), "finite"),
        (((50.0, 1.5, 0.2),), r"Calibration.farther\[0\]'s level must be in"),
        (((50.0, 0.5, 0.2), (90.0, 0.5, 1.0)), r"Calibration.farther\[1\]'s wls_weight must be in"),
    ],
)
def test_bad_far_blends_are_refused(farther, message):
    with pytest.raises(ValueError, match=message):
        Calibration(np.array([0.0, 1.0]), np.array([0.0, 1.0]), 0.5, farther=farther)


def test_a_calibrated_predictor_reads_its_samples_through_it_and_saves_it(tmp_path):
    config = FMConfig(horizon=20, recent=2, spread=2, hidden=8, context_dim=4, time_dim=4)
    raw = FMPredictor(VelocityNet(config))
    calibration = Calibration(
        np.array([0.0, 0.5, 1.0]), np.array([0.3, 0.6, 0.9]), 0.25, 0.4, farther=((15, 0.5, 0.6),)
    )
    calibrated = FMPredictor(raw.net, calibration=calibration)
    prefixes = [2.0 * (1.0 + np.arange(n + 1.0)) ** -0.5 for n in (5, 9, 14)]
    targets = np.array([p[-1] * 0.95 for p in prefixes])
    budgets = np.array([3, 10, 20])
    sampled = raw.sampled_crossings(prefixes, targets)
    remaining, p_success = calibrated.estimate_batch(prefixes, targets, budgets)
    wls, _ = WLSPredictor().estimate_batch(prefixes, targets, budgets)
    np.testing.assert_array_equal(remaining, calibration.remaining(sampled, wls, 20))
    share = np.mean(sampled <= budgets[:, None], axis=1)
    np.testing.assert_allclose(p_success, np.interp(share, [0, 0.5, 1], [0.3, 0.6, 0.9]))
    calibrated.save(tmp_path / "fm.pt")
    loaded = FMPredictor.pretrained(tmp_path / "fm.pt")
    assert (loaded.calibration.level, loaded.calibration.wls_weight) == (0.25, 0.4)
    assert loaded.calibration.farther == ((15.0, 0.5, 0.6),)
    np.testing.assert_array_equal(loaded.calibration.values, calibration.values)
    np.testing.assert_array_equal(loaded.estimate_batch(prefixes, targets, budgets)[1], p_success)


def test_the_shipped_checkpoint_is_calibrated_and_can_be_read_raw():
    from mara_agents.predictors import make_predictor
    from mara_agents.predictors.flow import PRETRAINED

    shipped, raw = make_predictor("fm"), FMPredictor.pretrained(PRETRAINED, calibrated=False)
    assert shipped.calibration is not None and raw.calibration is None
    prefix = 2.0 * (1.0 + np.arange(60.0)) ** -0.4
    np.testing.assert_array_equal(shipped.futures([prefix]), raw.futures([prefix]))
    target, budget = np.array([prefix[-1] * 0.9]), np.array([200])
    p_shipped = shipped.estimate_batch([prefix], target, budget)[1]
    sampled = shipped.sampled_crossings([prefix], target)  # under the calibration's reading
    wls, _ = WLSPredictor().estimate_batch([prefix], target, budget)
    tasks = task_features([prefix], target)
    np.testing.assert_allclose(
        p_shipped, shipped.calibration.p_success(sampled, budget, wls, tasks)
    )


def test_a_check_strength_outside_its_range_is_refused_and_a_saved_one_is_read_back(tmp_path):
    with pytest.raises(ValueError, match="Calibration.backtest must be in"):
        Calibration(np.array([0.0, 1.0]), np.array([0.0, 1.0]), 0.5, 0.0, 2.5)
    config = FMConfig(horizon=20, recent=2, spread=2, hidden=8, context_dim=4, time_dim=4)
    calibration = Calibration(np.array([0.0, 1.0]), np.array([0.1, 0.9]), 0.5, 0.2, 0.5)
    FMPredictor(VelocityNet(config), calibration=calibration).save(tmp_path / "fm.pt")
    assert FMPredictor.pretrained(tmp_path / "fm.pt").calibration.backtest == 0.5


def test_mara_reads_the_network_its_policies_were_trained_on():
    from mara_agents.predictors import make_predictor
    from mara_agents.predictors.flow import MARA_NETWORK
    from mara_agents.schedulers.variants import VARIANTS

    mara = make_predictor("fm_mara_student")
    assert mara.calibration is None and MARA_NETWORK.name == "fm_mara_student.pt"
    assert {v.predictor for v in VARIANTS.values()} == {"fm_mara_student"}
    reference = FMPredictor.pretrained(MARA_NETWORK, calibrated=False)
    prefix = 2.0 * (1.0 + np.arange(60.0)) ** -0.4
    np.testing.assert_array_equal(mara.futures([prefix]), reference.futures([prefix]))


def test_a_predictor_by_name_takes_sampler_settings_and_wls_refuses_them():
    from mara_agents.predictors import make_predictor

    cheap = make_predictor("fm_mara_student", samples=8, ode_steps=2)
    assert (cheap.config.samples, cheap.config.ode_steps) == (8, 2) and cheap.calibration is None
    prefix = 2.0 * (1.0 + np.arange(60.0)) ** -0.4
    assert cheap.futures([prefix]).shape[1] == 8
    assert make_predictor("fm", samples=8).calibration is not None
    with pytest.raises(ValueError, match="'wls' has no sampler settings"):
        make_predictor("wls", samples=8)
    with pytest.raises(ValueError, match="shape the trained network"):
        make_predictor("fm", hidden=64)


def test_a_logistic_calibration_reads_more_than_the_share():
    from mara_agents.predictors.calibration import FEATURES, success_features

    crossings = np.array([[10.0, 20.0, np.inf, np.inf], [300.0, 400.0, np.inf, np.inf]])
    budgets, wls = np.array([100, 450]), np.array([50.0, np.inf])
    features = success_features(crossings, budgets, wls)
    assert features.shape == (2, FEATURES)
    np.testing.assert_allclose(features[:, 0], np.log(2.5 / 2.5))  # (2 + 0.5) / (4 + 1): even
    np.testing.assert_allclose(features[:, 3], np.log1p([50.0, 501.0]))
    only_budget = Calibration(
        np.array([0.0, 1.0]),
        np.array([0.0, 1.0]),
        coefficients=np.array([-5.0, 0, 1, 0, 0, 0, 0, 0]),
    )  # the same share, the larger budget more likely to succeed (identity isotonic map)
    p = only_budget.p_success(crossings, budgets, wls)
    assert p[1] > p[0] and np.allclose(p, 1 / (1 + np.exp(5 - np.log1p(budgets))))
    with pytest.raises(ValueError, match="Calibration.coefficients must be 8 finite numbers"):
        Calibration(np.array([0.0, 1.0]), np.array([0.0, 1.0]), coefficients=np.zeros(3))


def test_the_public_predictors_are_wls_and_fm_and_other_names_are_refused():
    from mara_agents.predictors import PREDICTORS, make_predictor

    assert sorted(PREDICTORS) == ["fm", "wls"]
    for name in ("fm_raw", "fm_mara", "fm_uncalibrated", "fm_mara_teacher"):
        with pytest.raises(ValueError, match=f"unknown predictor '{name}'"):
            make_predictor(name)
