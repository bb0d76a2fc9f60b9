"""The predictor hook: estimates fill the features of ready tasks whose prefix changed."""

import numpy as np
import pytest

from coreenv import BatchedCore, CoreEnv, EnvConfig, Estimate, NoPredictorError, SlotFeature
from coreenv.core.features import NO_PREDICTOR, OBS_BOUND
from coreenv.predictor import quantiles_many
from helpers import idle, scripted_env, task

LEVELS = (0.1, 0.5, 0.9)


class Recorder:
    """Says 'remaining = 100 - prefix length' and records every call."""

    def __init__(self):
        self.calls = []

    def estimate(self, prefix, target, budget):
        self.calls.append((len(prefix), target, budget))
        return Estimate(100.0 - len(prefix), 0.25)


class QuantileRecorder(Recorder):
    """`Recorder` with quantiles 100 - n, 200 - n and inf (beyond its horizon), n = len(prefix)."""

    def __init__(self):
        super().__init__()
        self.quantile_calls = []

    def estimate_quantiles(self, prefixes, targets, levels):
        self.quantile_calls.append(([len(p) for p in prefixes], targets.tolist(), levels.tolist()))
        n = np.array([len(p) for p in prefixes], np.float64)[:, None]
        return np.hstack([100.0 - n, 200.0 - n, np.full_like(n, np.inf)])


def make(predictor, **overrides):
    env = scripted_env(
        {0: [task(demand=30, window=50)]},
        num_nodes=1,
        num_slots=1,
        min_prefix=3,
        predictor=predictor,
        **overrides,
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
    assert env.view().est_remaining[0, 0] == 96.0


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
        _ = env.view().est_remaining


def test_with_a_predictor_estimates_start_at_zero_until_ready():
    obs, *_ = make(Recorder()).step({"node_0": 0})
    assert block(obs)[SlotFeature.EST_REMAINING] == 0.0


def test_attaching_or_detaching_a_predictor_mid_episode_updates_the_flags():
    env = make(None)
    env.step({"node_0": 0})
    env.predictor = Recorder()
    obs, *_ = env.step(idle(env))
    assert block(obs)[SlotFeature.EST_REMAINING] == 0.0  # attached: no estimate yet, not -1
    assert env.view().est_remaining[0, 0] == 0.0
    env.predictor = None
    obs, *_ = env.step(idle(env))
    assert block(obs)[SlotFeature.EST_REMAINING] == NO_PREDICTOR
    with pytest.raises(NoPredictorError):
        _ = env.view().est_remaining


# -- optional quantile columns (EnvConfig.estimate_quantiles) -------------------------------------


def quantile_columns(observations):
    return block(observations)[len(SlotFeature) :]


def test_without_levels_the_layout_is_unchanged():
    m, k = 4, 8
    assert CoreEnv().observation_space("node_0")["observation"].shape == (m + 3 + 9 * k,)
    assert CoreEnv().state_space.shape == (3 + 9 * k,)
    assert BatchedCore(EnvConfig(), 1).obs_dim == m + 3 + 9 * k


def test_each_level_adds_a_column_to_every_slot_block():
    m, k = 4, 8
    config = EnvConfig(estimate_quantiles=LEVELS)
    assert CoreEnv(config).observation_space("node_0")["observation"].shape == (m + 3 + 12 * k,)
    assert CoreEnv(config).state_space.shape == (3 + 12 * k,)
    assert BatchedCore(config, 1).obs_dim == m + 3 + 12 * k


def test_quantile_columns_hold_the_scaled_quantiles_once_ready():
    predictor = QuantileRecorder()
    env = make(predictor, estimate_quantiles=LEVELS)
    obs, *_ = env.step({"node_0": 0})
    assert block(obs).shape == (len(SlotFeature) + 3,)
    assert quantile_columns(obs).tolist() == [0.0, 0.0, 0.0]  # not ready yet
    for _ in range(2):
        obs, *_ = env.step({"node_0": 0})  # the third batch: ready
    scale = env.config.time_scale  # B = 1
    expected = np.array([96 / scale, 196 / scale, OBS_BOUND], np.float32)  # inf: the bound
    np.testing.assert_array_equal(quantile_columns(obs), expected)
    assert block(obs)[SlotFeature.EST_REMAINING] == np.float32(96 / scale)  # unchanged columns
    assert predictor.quantile_calls == [([4], [pytest.approx(task(30, 50).target)], list(LEVELS))]
    obs, *_ = env.step(idle(env))  # not served: no new quantiles, the old ones stay
    assert len(predictor.quantile_calls) == 1
    np.testing.assert_array_equal(quantile_columns(obs), expected)


def test_quantile_columns_follow_the_batches_per_step_scale():
    env = make(QuantileRecorder(), estimate_quantiles=(0.5, 0.6, 0.7), batches_per_step=2)
    for _ in range(2):
        obs, *_ = env.step({"node_0": 0})  # 4 batches: ready
    scale = 2 * env.config.time_scale
    assert quantile_columns(obs)[:2].tolist() == [np.float32(95 / scale), np.float32(195 / scale)]


def test_without_a_predictor_quantile_columns_are_flagged():
    env = make(None, estimate_quantiles=LEVELS)
    obs, *_ = env.step({"node_0": 0})
    assert quantile_columns(obs).tolist() == [NO_PREDICTOR] * 3


def test_attaching_or_detaching_a_predictor_resets_the_quantile_columns():
    env = make(QuantileRecorder(), estimate_quantiles=LEVELS)
    for _ in range(3):
        env.step({"node_0": 0})
    env.predictor = None
    obs, *_ = env.step(idle(env))
    assert quantile_columns(obs).tolist() == [NO_PREDICTOR] * 3
    env.predictor = QuantileRecorder()
    obs, *_ = env.step(idle(env))
    assert quantile_columns(obs).tolist() == [0.0] * 3  # attached: no estimate yet


def test_a_predictor_without_quantiles_is_refused_when_levels_are_set():
    message = r"EnvConfig.estimate_quantiles needs a predictor with estimate_quantiles\("
    with pytest.raises(TypeError, match=message):
        make(Recorder(), estimate_quantiles=LEVELS)
    env = make(None, estimate_quantiles=LEVELS)
    with pytest.raises(TypeError, match=message):
        env.predictor = Recorder()
    assert env.predictor is None
    make(Recorder()).step({"node_0": 0})  # without levels, two estimates are enough


class Fixed:
    """A predictor whose quantiles are given."""

    def __init__(self, quantiles):
        self.quantiles = quantiles

    def estimate(self, prefix, target, budget):
        return Estimate(1.0, 0.5)

    def estimate_quantiles(self, prefixes, targets, levels):
        return self.quantiles


def call(predictor, tasks=2, levels=(0.25, 0.75)):
    prefixes = [np.array([2.0, 1.5, 1.0])] * tasks
    return quantiles_many(predictor, prefixes, np.full(tasks, 0.5), np.array(levels))


def test_quantiles_many_returns_valid_quantiles_as_float64():
    quantiles = call(Fixed([[1, 2], [np.inf, np.inf]]))
    assert quantiles.dtype == np.float64
    assert quantiles.tolist() == [[1.0, 2.0], [np.inf, np.inf]]


@pytest.mark.parametrize(
    ("quantiles", "message"),
    [
        ([1.0, 2.0], r"shape \(2,\) for 2 tasks and 2 levels; need \(2, 2\)"),
        ([[1.0, 2.0, 3.0]] * 2, r"shape \(2, 3\)"),
        ([[1.0, 2.0]], r"shape \(1, 2\)"),
        ([[1.0, np.nan], [1.0, 2.0]], r"\[1.0, nan\] for task 0; need values >= 0 or inf"),
        ([[-1.0, 2.0], [1.0, 2.0]], "need values >= 0 or inf"),
        ([[-np.inf, 2.0], [1.0, 2.0]], "need values >= 0 or inf"),
        ([[3.0, 2.0], [1.0, 2.0]], r"non-decreasing along the levels \[0.25 0.75\]"),
        ([[1.0, 2.0], [np.inf, 5.0]], r"\[inf, 5.0\] for task 1; need values non-decreasing"),
    ],
)
def test_quantiles_many_refuses_bad_answers_naming_the_predictor(quantiles, message):
    with pytest.raises(ValueError, match=f"predictor Fixed returned .*{message}"):
        call(Fixed(quantiles))


def test_quantiles_many_needs_the_method():
    with pytest.raises(TypeError, match="EnvConfig.estimate_quantiles needs a predictor"):
        call(Recorder())


def test_bad_quantiles_from_the_environment_are_refused():
    env = make(Fixed([[2.0, 1.0, 0.0]]), estimate_quantiles=LEVELS)
    with pytest.raises(ValueError, match="non-decreasing"):
        for _ in range(3):
            env.step({"node_0": 0})
