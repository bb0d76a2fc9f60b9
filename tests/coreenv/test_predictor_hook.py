"""The predictor hook: estimates fill the features of ready tasks whose prefix changed."""

import numpy as np
import pytest

from coreenv import Estimate, NoPredictorError, SlotFeature
from coreenv.core.features import NO_PREDICTOR
from helpers import idle, scripted_env, task


class Recorder:
    """Says 'remaining = 100 - prefix length' and records every call."""

    def __init__(self):
        self.calls = []

    def estimate(self, prefix, target, budget):
        self.calls.append((len(prefix), target, budget))
        return Estimate(100.0 - len(prefix), 0.25)


def make(predictor):
    env = scripted_env(
        {0: [task(demand=30, window=50)]},
        num_nodes=1,
        num_slots=1,
        min_prefix=3,
        predictor=predictor,
    )
    env.step(idle(env))
    return env


def block(observations):
    return observations["node_0"]["observation"][1 + 3 :]


def test_estimates_appear_once_ready_and_only_when_the_prefix_changes():
    predictor = Recorder()
    env = make(predictor)
    for _ in range(2):
        obs, *_ = env.step({"node_0": 0})
    assert predictor.calls == [] and block(obs)[SlotFeature.EST_P_SUCCESS] == 0.0
    obs, *_ = env.step({"node_0": 0})  # the third batch: ready
    assert predictor.calls == [(4, pytest.approx(task(30, 50).target), 51 - 4)]  # steps t=4..50
    scale = env.config.time_scale
    assert block(obs)[SlotFeature.EST_REMAINING] == pytest.approx(96 / scale)
    assert block(obs)[SlotFeature.EST_P_SUCCESS] == 0.25
    env.step(idle(env))  # not served: no new estimate
    assert len(predictor.calls) == 1
    assert env.slot_table().est_remaining[0] == 96.0


def test_batched_predictors_are_called_once_per_step():
    class Batched:
        def __init__(self):
            self.batches = []

        def estimate(self, prefix, target, budget):
            raise AssertionError("estimate_batch should be used")

        def estimate_batch(self, prefixes, targets, budgets):
            self.batches.append(len(prefixes))
            return np.full(len(prefixes), np.inf), np.zeros(len(prefixes))

    predictor = Batched()
    env = make(predictor)
    for _ in range(4):
        obs, *_ = env.step({"node_0": 0})
    assert predictor.batches == [1, 1]
    assert block(obs)[SlotFeature.EST_REMAINING] == 1000.0  # inf is clipped to the bound


@pytest.mark.parametrize(
    ("estimate", "message"),
    [(Estimate(float("nan"), 0.5), "remaining"), (Estimate(3.0, 1.5), "p_success")],
)
def test_bad_estimates_are_refused(estimate, message):
    class Bad:
        def estimate(self, prefix, target, budget):
            return estimate

    env = make(Bad())
    with pytest.raises(ValueError, match=message):
        for _ in range(3):
            env.step({"node_0": 0})


def test_an_object_without_estimate_is_refused():
    with pytest.raises(TypeError, match="estimate"):
        make(object())


def test_without_a_predictor_estimates_are_flagged_not_zero():
    env = make(None)
    obs, *_ = env.step({"node_0": 0})
    assert block(obs)[SlotFeature.EST_REMAINING] == NO_PREDICTOR
    assert block(obs)[SlotFeature.EST_P_SUCCESS] == NO_PREDICTOR
    with pytest.raises(NoPredictorError, match="no predictor attached"):
        _ = env.slot_table().est_remaining
    with pytest.raises(NoPredictorError, match="observation_predictor"):
        _ = env.slot_table().est_p_success


def test_with_a_predictor_estimates_start_at_zero_until_ready():
    obs, *_ = make(Recorder()).step({"node_0": 0})
    assert block(obs)[SlotFeature.EST_REMAINING] == 0.0


def test_attaching_or_detaching_a_predictor_mid_episode_updates_the_flags():
    env = make(None)
    env.step({"node_0": 0})
    env.predictor = Recorder()
    obs, *_ = env.step(idle(env))
    assert block(obs)[SlotFeature.EST_REMAINING] == 0.0  # attached: no estimate yet, not -1
    assert env.slot_table().est_remaining[0] == 0.0
    env.predictor = None
    obs, *_ = env.step(idle(env))
    assert block(obs)[SlotFeature.EST_REMAINING] == NO_PREDICTOR
    with pytest.raises(NoPredictorError):
        _ = env.slot_table().est_remaining
