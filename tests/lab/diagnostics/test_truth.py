"""The truth with errors of a chosen size: without noise TruthLARA is LARA on the true demand and
TruthHOP serves what it serves; with noise each task keeps one reproducible error, and the
diagnostics refuse what they cannot play."""

import dataclasses

import numpy as np
import pytest

import coreenv
from coreenv.curves import named_task_set
from coreenv_lab.diagnostics import ClairvoyantPredictor, TruthHOP, TruthLARA
from coreenv_lab.diagnostics.truth import TaskErrors
from helpers import idle
from mara_agents.evaluation import completion_rates
from mara_agents.schedulers import LARA

ID = {"task_set": "id", "arrival_prob": 0.04}


def view_after(steps: int, seed: int = 3) -> coreenv.SchedulerView:
    """A clairvoyant view of an ID episode with tasks in its slots."""
    env = coreenv.parallel_env(task_set="id")
    env.reset(seed=seed)
    for _ in range(steps):
        env.step(idle(env))
    return env.view(clairvoyant=True)


def test_truth_lara_without_noise_plays_as_lara_on_a_clairvoyant_predictor():
    truth = LARA(predictor=ClairvoyantPredictor(named_task_set("id")))
    assert np.array_equal(
        completion_rates(TruthLARA(), 3, 970_000, **ID), completion_rates(truth, 3, 970_000, **ID)
    )


def test_truth_hop_without_noise_serves_what_lara_on_the_truth_serves():
    assert np.array_equal(
        completion_rates(TruthHOP(samples=4), 3, 970_000, **ID),
        completion_rates(TruthLARA(), 3, 970_000, **ID),
    )


def test_noise_changes_the_play_reproducibly_on_a_set_whose_prefixes_hide_the_truth():
    env = {"task_set": "rl_ood", "arrival_prob": 0.04}  # ClairvoyantPredictor cannot play it
    for make in (lambda: TruthLARA(noise=1.0), lambda: TruthHOP(noise=1.0, samples=4)):
        noisy = completion_rates(make(), 3, 970_000, **env)
        assert np.array_equal(noisy, completion_rates(make(), 3, 970_000, **env))
        assert not np.array_equal(noisy, completion_rates(TruthLARA(), 3, 970_000, **env))


def test_each_task_keeps_one_log_normal_error_and_samples_spread_around_it():
    view = view_after(40)
    episodes, slots = np.nonzero(view.occupied)
    errors = TaskErrors(0.5, seed=0)
    factors = errors.factors(view, episodes, slots)
    assert np.array_equal(factors, errors.factors(view, episodes, slots))  # one per task
    samples = errors.factors(view, episodes, slots, count=2000)
    assert samples.shape == (len(episodes), 2000)
    spread = np.log(samples) - np.log(factors)[:, None]  # the samples' σ around the estimate
    assert np.allclose(spread.mean(axis=1), 0.0, atol=0.05)
    assert np.allclose(spread.std(axis=1), 0.5, atol=0.03)
    draws = [TaskErrors(0.5, 0)._normal(970_000, uid, 0, 1)[0] for uid in range(300)]
    assert 0.85 < np.std(draws) < 1.15 and abs(np.mean(draws)) < 0.2


@pytest.mark.parametrize("noise", [-0.1, float("nan"), "0.5", True])
def test_a_bad_noise_is_refused_by_name(noise):
    for make in (TruthLARA, TruthHOP):
        with pytest.raises(ValueError, match="noise must be a number >= 0"):
            make(noise=noise)


def test_the_truth_is_needed_and_noise_needs_seeded_episodes():
    view = view_after(40)
    ready = view.occupied
    hidden = dataclasses.replace(view, remaining=None)
    with pytest.raises(ValueError, match="needs a clairvoyant view"):
        TruthLARA()._remaining(hidden, ready)
    unseeded = dataclasses.replace(view, seed=np.array([-1]))
    with pytest.raises(ValueError, match="needs seeded episodes"):
        TruthHOP(noise=0.5)._samples(unseeded, ready)
    with pytest.raises(ValueError, match="samples must be an int >= 1"):
        TruthHOP(samples=0)
