"""Interval estimates: bootstrap intervals that cover, stratify and pair; IQM; P(improvement)."""

import numpy as np
import pytest

pytest.importorskip("scipy")

from mara_agents.intervals import (  # noqa: E402
    Interval,
    improvement_interval,
    improvement_probability,
    iqm,
    iqm_interval,
    mean_interval,
    paired_interval,
)


def test_the_interval_brackets_the_mean_and_narrows_with_more_episodes():
    rng = np.random.default_rng(0)
    small, large = rng.normal(0.5, 0.1, 20), rng.normal(0.5, 0.1, 2000)
    for values in (small, large):
        interval = mean_interval(values)
        assert interval.low < values.mean() == interval.estimate < interval.high
    narrow, wide = mean_interval(large), mean_interval(small)
    assert narrow.high - narrow.low < (wide.high - wide.low) / 5  # ≈ 1/√100


def test_the_95_percent_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(1)
    samples = [rng.binomial(1, 0.3, 60).astype(float) for _ in range(200)]
    intervals = [mean_interval(values, seed) for seed, values in enumerate(samples)]
    covered = [interval.low <= 0.3 <= interval.high for interval in intervals]
    assert 0.88 <= np.mean(covered) <= 0.99


def test_the_same_seed_gives_the_same_interval():
    values = np.random.default_rng(2).random(30)
    assert mean_interval(values, seed=3) == mean_interval(values, seed=3)


def test_strata_are_averaged_as_cells_and_resampled_within_themselves():
    low, high = np.full(10, 0.2), np.array([0.8, 0.9] * 5)
    interval = mean_interval([low, high])
    assert interval.estimate == pytest.approx(0.525)  # cells weigh equally, not episodes
    # only the second stratum varies: the interval is half its mean's interval
    alone = mean_interval(high)
    assert interval.high - interval.low == pytest.approx((alone.high - alone.low) / 2, rel=0.15)
    assert mean_interval([np.array([0.4]), np.array([0.6])]) == Interval(0.5, 0.5, 0.5)


def test_paired_differences_remove_what_episodes_share():
    rng = np.random.default_rng(4)
    hardness = rng.random(50)
    first, second = hardness, hardness + 0.01  # better on every episode by the same amount
    interval = paired_interval(first, second)
    assert interval == Interval(pytest.approx(0.01), pytest.approx(0.01), pytest.approx(0.01))
    assert improvement_probability(first, second) == 1.0
    assert improvement_probability(second, first) == 0.0
    assert improvement_probability(first, first) == 0.5


def test_iqm_ignores_the_outer_quarters():
    assert iqm(np.array([0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 100.0])) == 1.0


def test_bad_samples_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="at least one episode in every stratum"):
        mean_interval([np.zeros(3), np.zeros(0)])
    with pytest.raises(ValueError, match="same episodes per stratum, got \\[3\\] and \\[4\\]"):
        paired_interval(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="iqm of no values"):
        iqm(np.zeros(0))


def test_text_prints_the_estimate_and_its_bounds():
    assert Interval(0.5211, 0.48, 0.559).scaled(100).text() == "52.1 [48.0, 55.9]"
    assert Interval(1.0, -0.5, 2.0).text(2, sign=True) == "+1.00 [-0.50, 2.00]"


def test_the_iqm_interval_covers_the_pooled_iqm_and_narrows_with_more_episodes():
    rng = np.random.default_rng(0)
    few = [rng.normal(0.5, 0.1, 10) for _ in range(3)]
    many = [rng.normal(0.5, 0.1, 400) for _ in range(3)]
    small, large = iqm_interval(few), iqm_interval(many)
    assert small.low <= small.estimate == iqm(np.concatenate(few)) <= small.high
    assert large.high - large.low < small.high - small.low


def test_the_improvement_interval_is_around_the_share_of_episodes_won():
    first = [np.zeros(50), np.zeros(50)]
    second = [np.ones(50), np.r_[np.ones(25), -np.ones(25)]]  # wins all, then half
    p = improvement_interval(first, second)
    assert p.estimate == 0.75 and p.low < 0.75 < p.high and p.high <= 1.0
    assert improvement_interval(first, first).estimate == 0.5  # ties count one half
