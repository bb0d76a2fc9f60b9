"""The WLS fit computed in the engine (`coreenv.wls_fit`, `coreenv.WLSEstimates`): the same
estimates as the fit called on the revealed prefixes, one source compiled and as plain Python,
refused where quantiles are asked, and its settings checked."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import coreenv
from coreenv_lab.recording import fingerprint, fingerprint_vector
from coreenv import CoreEnv, EnvConfig
from coreenv.wls import WLSEstimates
from coreenv.core.features import OBS_BOUND, SlotFeature

CONFIG = EnvConfig(task_set="id_train", arrival_prob=0.2, num_slots=6, min_prefix=3)


class OnPrefixes:
    """``estimates``'s fit reached as any predictor is: on the revealed loss prefixes."""

    def __init__(self, estimates):
        self.estimates = estimates

    def estimate(self, prefix, target, budget):
        return self.estimates.estimate(prefix, target, budget)

    def estimate_batch(self, prefixes, targets, budgets):
        return self.estimates.estimate_batch(prefixes, targets, budgets)


def played(predictor, seed, steps, config=CONFIG):
    """(raw estimates (steps, K, 2), estimate features (steps, K, 2)) of an episode whose nodes
    serve random occupied slots."""
    env = CoreEnv(config, predictor=predictor)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    raw, features = [], []
    for _ in range(steps):
        if not env.agents:
            break
        view = env.view()
        allowed = np.flatnonzero(view.action_mask[0])
        observations, *_ = env.step({a: int(rng.choice(allowed)) for a in env.agents})
        table = env.view().obs[0, 0, config.num_nodes + 3 :].reshape(config.num_slots, -1)
        raw.append(env.view().estimates[0])
        features.append(table[:, [SlotFeature.EST_REMAINING, SlotFeature.EST_P_SUCCESS]])
    return np.array(raw), np.array(features)


@pytest.mark.parametrize(
    "estimates", [WLSEstimates(), WLSEstimates(discount=0.9, ridge=0.5, min_points=5)], ids=repr
)
@pytest.mark.parametrize("seed", [0, 3])
def test_the_engine_writes_the_fit_of_the_revealed_prefixes(estimates, seed):
    """Through the curve store (logs by math.log) or on the prefixes (np.log): remaining equal,
    P(success) within 1e-9, in the raw estimates and the features."""
    raw, features = played(estimates, seed, 400)
    expected_raw, expected_features = played(OnPrefixes(estimates), seed, 400)
    assert raw.shape == expected_raw.shape and len(raw) > 100
    np.testing.assert_array_equal(raw[..., 0], expected_raw[..., 0])
    np.testing.assert_allclose(raw[..., 1], expected_raw[..., 1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(features, expected_features, rtol=0, atol=1e-6)  # float32
    ready = raw[..., 0] != 0.0
    assert ready.sum() > 50 and np.isinf(raw[..., 0]).any()  # estimated, some unknown
    scale = CONFIG.batches_per_step * CONFIG.time_scale
    np.testing.assert_allclose(
        features[..., 0][ready], np.minimum(raw[..., 0][ready] / scale, OBS_BOUND), rtol=1e-6
    )


def test_a_predictor_exposing_it_in_engine_is_computed_there():
    class Exposing(OnPrefixes):
        @property
        def in_engine(self):
            return self.estimates

        def estimate_batch(self, prefixes, targets, budgets):
            raise AssertionError("the engine computes the estimates: never called")

    raw, _ = played(Exposing(WLSEstimates()), 0, 200)
    expected, _ = played(WLSEstimates(), 0, 200)
    np.testing.assert_array_equal(raw, expected)


def test_quantile_levels_refuse_it_as_any_predictor_without_quantiles():
    config = CONFIG.replace(estimate_quantiles=(0.5,))
    with pytest.raises(TypeError, match=r"EnvConfig.estimate_quantiles needs a predictor"):
        CoreEnv(config, predictor=WLSEstimates())


@pytest.mark.parametrize(
    ("field", "value", "rule"),
    [
        ("discount", 0.0, r"in \(0, 1\]"),
        ("discount", 1.5, r"in \(0, 1\]"),
        ("ridge", -1.0, "a number >= 0"),
        ("horizon", 0, "an int >= 1"),
        ("min_points", 1, "an int >= 2"),
        ("min_points", 2.5, "an int >= 2"),
    ],
)
def test_bad_settings_are_refused_naming_the_field_value_and_rule(field, value, rule):
    with pytest.raises(ValueError, match=rf"WLSEstimates.{field} must be {rule}, got {value}"):
        WLSEstimates(**{field: value})


def test_degenerate_prefixes_are_unknown():
    estimates = WLSEstimates()
    assert estimates.estimate(np.array([2.0, 1.9, 1.8]), 1.0, 100) == (math.inf, 0.0)  # 2 points
    assert estimates.estimate(np.full(30, 1.0), 0.5, 100).remaining == math.inf  # flat
    remaining, p_success = estimates.estimate_batch([], np.zeros(0), np.zeros(0))
    assert remaining.shape == p_success.shape == (0,)


def test_a_batch_needs_one_target_and_budget_per_prefix():
    prefixes = [np.linspace(2.0, 1.0, 30)] * 3
    with pytest.raises(ValueError, match=r"3 prefixes, targets of shape \(2,\)"):
        WLSEstimates().estimate_batch(prefixes, np.ones(2), np.ones(3))


def _recorded() -> dict:
    """Estimates of bank prefixes, and an episode's fingerprint with WLS in the engine."""
    bank = coreenv.curves.named_task_set("id_train")
    prefixes = [bank.curve(row).losses[: 5 + 40 * row] for row in range(20)]
    targets = np.array([prefix[-1] * 0.9 for prefix in prefixes])
    remaining, p_success = WLSEstimates().estimate_batch(prefixes, targets, np.full(20, 300))
    env = CoreEnv(CONFIG, predictor=WLSEstimates())
    record = fingerprint(env, seeds=[4], max_steps=300).as_dict()
    return {"remaining": remaining.tolist(), "p": p_success.tolist(), "episode": record}


def test_compiled_and_plain_python_give_the_same_estimates_bit_for_bit():
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "import test_wls_fit; print(json.dumps(test_wls_fit._recorded()))"
    )
    plain = subprocess.run(
        [sys.executable, "-c", script, os.path.dirname(__file__)],
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(plain.stdout) == json.loads(json.dumps(_recorded()))
