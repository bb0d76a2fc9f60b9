"""The WLS predictor: exact on power laws, defined on degenerate prefixes, never NaN, and the
compiled fit gives the numbers of its formulas written out in numpy."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coreenv.curves import named_task_set
from mara_agents.predictors import HORIZON, WLSConfig, WLSPredictor


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


# -- the compiled fit against the formulas, written out here in numpy as the specification -------


def reference_estimate(prefix, target, budget, config):
    """(remaining, p_success, crossing) by the module docstring's formulas, in plain numpy.

    ``crossing`` is ``s*`` (None without a finite crossing): where ``remaining``'s ceil is taken.
    """
    n = len(prefix) - 1
    if n < config.min_points:
        return math.inf, 0.0, None
    gamma, ridge = config.discount, config.ridge
    window = 10**9 if gamma == 1.0 else math.ceil(math.log(1e-12) / math.log(gamma))
    start = max(1, n - window + 1)
    log_s = np.log(np.arange(start, n + 1, dtype=np.float64))
    log_l = np.log(np.asarray(prefix[start:], np.float64))
    weights = (gamma ** np.arange(n - start + 1, dtype=np.float64))[::-1]  # γ^(n-s), s = start..n
    s0, s1 = weights.sum() + ridge, weights @ log_s
    s2 = weights @ (log_s * log_s) + ridge
    t0, t1 = weights @ log_l, weights @ (log_s * log_l)
    det = s2 * s0 - s1 * s1
    if det <= 1e-12 * s2 * s0:
        return math.inf, 0.0, None
    slope, intercept = (s0 * t1 - s1 * t0) / det, (s2 * t0 - s1 * t1) / det
    residual = log_l - slope * log_s - intercept
    variance = weights @ (residual * residual) / max(weights.sum() - 2.0, 1.0)
    remaining, crossing = math.inf, None
    log_crossing = (math.log(target) - intercept) / slope if slope < 0 else math.inf
    if log_crossing <= math.log(n + config.horizon + 1):
        crossing = math.exp(log_crossing)
        remaining = float(max(math.ceil(crossing - 1e-9) - n, 1))
    if budget <= 0:
        return remaining, 0.0, crossing
    x = np.array([math.log(n + budget), 1.0])
    v_inv = np.array([[s0, -s1], [-s1, s2]]) / det
    spread = math.sqrt(variance * (1.0 + x @ v_inv @ x)) + 1e-12
    z = (math.log(target) - (slope * x[0] + intercept)) / (spread * math.sqrt(2.0))
    return remaining, 0.5 * (1.0 + math.erf(z)), crossing


def bank_queries(rng, count):
    """Prefixes of real curves (the bundled bank's ID training runs), targets below and above."""
    bank = named_task_set("id_train")
    queries = []
    for row in rng.choice(len(bank), count, replace=False):
        losses = bank.curve(int(row)).losses
        for n in rng.integers(0, len(losses) - 1, 12):
            ahead = losses[min(len(losses) - 1, n + rng.integers(1, 600))]
            queries.append((losses[: n + 1], ahead * rng.uniform(0.8, 1.05)))
    return queries


def synthetic_queries(rng):
    """Short, long, exact, flat, rising, noisy, plateaued and stepped prefixes."""
    s = np.arange(1200, dtype=np.float64)
    shapes = [
        3.0 * np.maximum(s, 1.0) ** -0.5,  # an exact power law
        2.0 * np.maximum(s, 1.0) ** -0.05,  # a slow one: crossings beyond the horizon
        np.full(s.size, 1.3),  # flat
        1.0 + 1e-3 * s,  # rising
        0.5 + 2.0 * np.exp(-s / 80.0),  # exponential towards a floor
        np.where(s < 300, 2.0, 0.7) * np.maximum(s, 1.0) ** -0.2,  # a step drop
    ]
    queries = []
    for shape in shapes:
        for noise in (0.0, 0.01, 0.3):
            losses = shape * np.exp(noise * rng.standard_normal(s.size))
            for n in (0, 1, 2, 3, 4, 7, 30, 77, 78, 79, 200, 1100):
                for factor in (0.3, 0.7, 0.95, 1.2):
                    queries.append((losses[: n + 1], losses[n] * factor))
    return queries


CONFIGS = [
    WLSConfig(),
    WLSConfig(discount=0.9, ridge=0.1),
    WLSConfig(discount=1.0),
    WLSConfig(discount=0.5, min_points=5, horizon=50),
]


@pytest.mark.parametrize("config", CONFIGS, ids=repr)
def test_the_compiled_fit_gives_the_formulas_numbers(config):
    """Remaining equal (off by one only where the crossing is within 1e-6 of an integer, the
    ceil's edge); P(success) within 1e-9; the same unknowns. Bank curves and synthetic ones."""
    rng = np.random.default_rng(7)
    queries = bank_queries(rng, 40) + synthetic_queries(rng)
    budgets = rng.integers(-3, 900, len(queries))
    prefixes = [prefix for prefix, _ in queries]
    targets = np.array([target for _, target in queries])
    remaining, p_success = WLSPredictor(config).estimate_batch(prefixes, targets, budgets)
    for i, (prefix, target) in enumerate(queries):
        expected, p_expected, crossing = reference_estimate(prefix, target, budgets[i], config)
        where = f"query {i}: n={len(prefix) - 1}, target={target}, budget={budgets[i]}"
        edge = crossing is not None and abs(crossing - round(crossing)) < 1e-6
        if not (edge and abs(remaining[i] - expected) == 1):
            assert remaining[i] == expected, where
        assert p_success[i] == pytest.approx(p_expected, abs=1e-9), where


def test_the_default_horizon_is_the_shared_cap():
    assert WLSConfig().horizon == HORIZON
