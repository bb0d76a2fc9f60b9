"""The clairvoyant predictor answers with the truth where a prefix tells it; the error log scores
another predictor's answers against it without changing them."""

import math

import numpy as np
import pytest

from coreenv import Estimate
from coreenv.curves import demand_of, named_task_set
from coreenv_lab.diagnostics import ClairvoyantPredictor, ErrorLog
from mara_agents.predictors import WLSPredictor

BANK = named_task_set("id_train")


def tasks(count: int, prefix: int = 20):
    """(losses, target) of ``count`` runs, each target first reached within 40 batches after the
    prefix ``losses[: prefix + 1]``."""
    found = []
    for row in range(len(BANK)):
        losses = BANK.curve(row).losses
        target = float(losses[prefix + 1 : prefix + 41].min())
        if target < losses[: prefix + 1].min():
            found.append((losses, target))
    assert len(found) >= count, f"the bank has only {len(found)} such runs"
    return found[:count]


class Scaled:
    """The truth times one factor exp(0.5 z) per task (z drawn from the run's first loss)."""

    def __init__(self, truth: ClairvoyantPredictor) -> None:
        self.truth = truth

    def estimate(self, prefix, target, budget):
        z = np.random.default_rng(int(prefix[0] * 1e9)).standard_normal()
        remaining = self.truth.estimate(prefix, target, budget).remaining
        return Estimate(remaining * math.exp(0.5 * z), 0.0)


def test_it_answers_the_true_remaining_batches():
    truth = ClairvoyantPredictor(BANK)
    for losses, target in tasks(5):
        estimate = truth.estimate(losses[:21], target, budget=10**6)
        assert estimate.remaining == demand_of(losses, target) - 20
        assert estimate.p_success == 1.0


def test_a_prefix_shared_by_runs_of_different_demands_has_no_answer():
    bank = named_task_set("rl_ood")  # RL runs of one setting share their first batches
    first = [bank.curve(row).losses for row in range(len(bank))]
    a, b = next(
        (x, y) for x in first for y in first if x is not y and np.array_equal(x[:16], y[:16])
    )
    target = float(min(a[16:].min(), b[16:].min()))
    reach = {demand_of(r, target) if r.min() <= target else None for r in (a, b)}
    assert len(reach) == 2  # the two runs reach it at different batches (or one never)
    with pytest.raises(KeyError, match="not known from it"):
        ClairvoyantPredictor(bank).estimate(a[:16], target, 0)
    with pytest.raises(KeyError, match="not the start of any run"):
        ClairvoyantPredictor(bank).estimate(np.array([9.0, 8.0, 7.0, 6.0, 5.0]), 1.0, 0)


def test_the_error_log_answers_as_its_predictor_and_scores_it_against_the_truth():
    truth, wls = ClairvoyantPredictor(BANK), WLSPredictor()
    log = ErrorLog(wls, truth)
    for losses, target in tasks(20):
        assert log.estimate(losses[:21], target, 50) == wls.estimate(losses[:21], target, 50)
    assert len(log.log_errors) + log.never == 20 and log.unknown == 0
    assert log.equivalent_noise() > 0


def test_the_error_log_gives_back_the_size_of_a_known_error():
    truth = ClairvoyantPredictor(BANK)
    exact, scaled = ErrorLog(truth, truth), ErrorLog(Scaled(truth), truth)
    for losses, target in tasks(300):
        exact.estimate(losses[:21], target, 0)
        scaled.estimate(losses[:21], target, 0)
    assert exact.equivalent_noise() == 0.0 and exact.bias() == 0.0
    assert 0.4 < scaled.equivalent_noise() < 0.6  # 300 draws of |N(0, 0.5)|
    assert abs(scaled.bias()) < 0.1
    with pytest.raises(ValueError, match="no finite estimate"):
        ErrorLog(truth, truth).equivalent_noise()


def test_it_finds_the_runs_a_prefix_starts_however_short():
    truth = ClairvoyantPredictor(BANK)
    losses = BANK.curve(7).losses
    for length in (1, 2, 3, 4, 30):
        rows = truth.rows_of(losses[:length])
        assert 7 in rows
        assert all(np.array_equal(BANK.curve(r).losses[:length], losses[:length]) for r in rows)
    assert truth.rows_of(np.array([9.0, 8.0])) == []
