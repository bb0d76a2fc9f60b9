"""LARA: explores, then serves what its predictor says can finish; a valid matching always.
TruthLARA: LARA on the true demand, times one error per task."""

import dataclasses
import math

import numpy as np
import pytest

import coreenv
from coreenv import Estimate
from coreenv.curves import named_task_set
from helpers import idle, scripted_env, task
from mara_agents import evaluate
from mara_agents.evaluation import completion_rates
from mara_agents.predictors import ClairvoyantPredictor
from mara_agents.schedulers import LARA, TruthLARA


class MarksTaskInfeasible:
    """Says task with initial loss ``doomed`` needs forever; the others need 1 batch."""

    def __init__(self, doomed_prefix_start):
        self.doomed = doomed_prefix_start

    def estimate(self, prefix, target, budget):
        if prefix[0] == self.doomed:
            return Estimate(math.inf, 0.0)
        return Estimate(1.0, 1.0)


def test_lara_never_assigns_two_nodes_to_one_task():
    env = coreenv.parallel_env(seed=0, arrival_prob=0.1, arrival_horizon=400, num_nodes=3)
    observations, infos = env.reset()
    lara = LARA()
    lara.reset(env)
    while env.agents:
        actions = lara.act(observations, infos)
        chosen = [a for a in actions.values() if a != env.config.num_slots]
        assert len(chosen) == len(set(chosen))
        observations, _, _, _, infos = env.step(actions)
    assert env.metrics()["conflicts"] == 0


def test_lara_explores_first_then_drops_what_its_predictor_marks_infeasible():
    from helpers import power_curve

    doomed_curve = power_curve(60, scale=5.0)  # initial loss 5.0 identifies it
    env = scripted_env(
        {0: [task(50, 30, doomed_curve)], 1: [task(50, 60)]}, num_nodes=1, num_slots=2
    )
    lara = LARA(predictor=MarksTaskInfeasible(5.0), explore=2)
    lara.reset(env)
    env.step(idle(env))  # the doomed task arrives (earliest deadline)
    env.step(idle(env))  # the other arrives
    served = []
    for _ in range(6):
        actions = lara.act({}, {})
        served.append(int(env.view().uid[0, actions["node_0"]]))
        env.step(actions)
    assert served[:4] == [0, 0, 1, 1]  # exploration: 2 batches each, earliest deadline first
    assert served[4:] == [1, 1]  # then the doomed task is dropped


def test_lara_does_not_leave_nodes_idle_while_tasks_wait():
    result = evaluate(LARA(), episodes=1, seed=3, arrival_horizon=300)
    assert result["utilisation"] > 0.5


def test_truth_lara_without_noise_plays_as_lara_on_a_clairvoyant_predictor():
    env = {"task_set": "id", "arrival_prob": 0.04}
    truth = LARA(predictor=ClairvoyantPredictor(named_task_set("id")))
    assert np.array_equal(
        completion_rates(TruthLARA(), 3, 970_000, **env),
        completion_rates(truth, 3, 970_000, **env),
    )


def test_truth_lara_scales_each_task_by_one_reproducible_error():
    env = {"task_set": "rl_ood", "arrival_prob": 0.04}  # whose prefixes do not tell the truth
    noisy = completion_rates(TruthLARA(noise=1.0), 4, 970_000, **env)
    assert np.array_equal(noisy, completion_rates(TruthLARA(noise=1.0), 4, 970_000, **env))
    assert not np.array_equal(noisy, completion_rates(TruthLARA(), 4, 970_000, **env))
    lara = TruthLARA(noise=0.5)
    factors = [lara._factor(970_000, uid) for uid in range(200)]
    assert factors == [lara._factor(970_000, uid) for uid in range(200)]
    assert 0.4 < np.std(np.log(factors)) < 0.6


@pytest.mark.parametrize("noise", [-0.1, float("nan"), "0.5", True])
def test_truth_lara_refuses_a_bad_noise_by_name(noise):
    with pytest.raises(ValueError, match="TruthLARA noise must be a number >= 0"):
        TruthLARA(noise=noise)


def test_truth_lara_needs_the_hidden_truth_and_seeded_episodes():
    env = coreenv.parallel_env(seed=1, task_set="id")
    env.reset(seed=3)
    for _ in range(40):
        env.step(idle(env))
    ready = env.view().occupied
    assert ready.any()
    with pytest.raises(ValueError, match="needs a clairvoyant view"):
        TruthLARA()._remaining(env.view(), ready)
    unseeded = dataclasses.replace(env.view(clairvoyant=True), seed=np.array([-1]))
    with pytest.raises(ValueError, match="seeded episodes only"):
        TruthLARA(noise=0.5)._remaining(unseeded, ready)
