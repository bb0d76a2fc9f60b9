"""The WLS predictor: exact on power laws, defined on degenerate prefixes, never NaN."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mara_agents.predictors import WLSConfig, WLSPredictor


def power_law(scale=3.0, exponent=0.5, length=900):
    s = np.arange(length, dtype=np.float64)
    losses = scale * np.maximum(s, 1.0) ** -exponent
    losses[0] = scale * 1.2  # the initial loss is not on the fitted law (s = 0)
    return losses


@pytest.mark.parametrize("discount", [0.9, 0.98, 1.0])
@pytest.mark.parametrize(("scale", "exponent"), [(3.0, 0.5), (1.2, 0.25), (8.0, 1.1)])
def test_recovers_the_parameters_of_an_exact_power_law(discount, scale, exponent):
    predictor = WLSPredictor(WLSConfig(discount=discount, ridge=0.0))
    fit = predictor.fit(power_law(scale, exponent)[:60])
    assert fit.slope == pytest.approx(-exponent, abs=1e-9)
    assert fit.intercept == pytest.approx(math.log(scale), abs=1e-9)
    assert fit.variance == pytest.approx(0.0, abs=1e-12)
    assert fit.v_inv.shape == (2, 2)


@pytest.mark.parametrize("target_at", [20, 150, 455])
@pytest.mark.parametrize("seen", [3, 10, 19])
def test_estimate_is_exact_on_a_noiseless_power_law(target_at, seen):
    losses = power_law()
    estimate = WLSPredictor(WLSConfig(ridge=0.0)).estimate(
        losses[: seen + 1], losses[target_at], 1000
    )
    assert estimate.remaining == target_at - seen
    assert estimate.p_success == pytest.approx(1.0)


def test_budget_decides_the_success_probability():
    losses = power_law()
    predictor = WLSPredictor(WLSConfig(ridge=0.0))
    prefix, target = losses[:31], losses[300]
    assert predictor.estimate(prefix, target, budget=400).p_success > 0.99
    assert predictor.estimate(prefix, target, budget=100).p_success < 0.01
    assert predictor.estimate(prefix, target, budget=0).p_success == 0.0


def test_degenerate_prefixes_give_unknown_not_nan():
    predictor = WLSPredictor()
    assert predictor.estimate(np.array([2.0, 1.9]), 1.0, 100) == (math.inf, 0.0)  # too short
    rising = np.linspace(1.0, 2.0, 30)
    assert predictor.estimate(rising, 0.5, 100).remaining == math.inf
    flat = np.full(30, 1.0)
    assert predictor.estimate(flat, 0.5, 100).remaining == math.inf


def test_crossings_beyond_the_horizon_are_unknown():
    losses = power_law(exponent=0.05)
    assert (
        WLSPredictor(WLSConfig(horizon=50)).estimate(losses[:20], losses[800], 900).remaining
        == math.inf
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=60),
    st.floats(1e-7, 1e6),
    st.integers(-5, 2000),
)
def test_never_nan_on_any_prefix(values, target, budget):
    remaining, p_success = WLSPredictor().estimate(np.array(values), target, budget)
    assert not math.isnan(remaining) and remaining >= 0
    assert 0.0 <= p_success <= 1.0


def test_batch_matches_single_estimates():
    predictor = WLSPredictor()
    losses = power_law() * np.exp(0.01 * np.random.default_rng(0).standard_normal(900))
    prefixes = [losses[: n + 1] for n in (5, 40, 200)]
    targets, budgets = np.array([0.3, 0.2, 0.15]), np.array([100, 300, 50])
    remaining, p_success = predictor.estimate_batch(prefixes, targets, budgets)
    for i, prefix in enumerate(prefixes):
        single = predictor.estimate(prefix, targets[i], budgets[i])
        assert (remaining[i], p_success[i]) == (single.remaining, single.p_success)


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="discount"):
        WLSConfig(discount=1.5)
    with pytest.raises(ValueError, match="ridge"):
        WLSConfig(ridge=-1.0)
