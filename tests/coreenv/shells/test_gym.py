"""The Gymnasium view passes Gymnasium's and SB3's checkers and trains with MaskablePPO."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from coreenv import CoreGymEnv
from helpers import SMALL_CURVES

FAST = {"task_set": SMALL_CURVES, "deadline_window": (10, 60), "arrival_horizon": 200}


def test_gymnasium_check_env():
    check_env(CoreGymEnv(**FAST), skip_render_check=False)


def test_gymnasium_check_env_through_make():
    check_env(gymnasium.make("coreenv/CoRE-v1", **FAST).unwrapped)


def test_sb3_check_env():
    sb3_env_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3_env_checker.check_env(CoreGymEnv(**FAST), warn=True)


def test_action_masks_follow_sb3_contrib_layout():
    env = CoreGymEnv(num_nodes=3, num_slots=4, **FAST)
    env.reset(seed=0)
    masks = env.action_masks()
    assert masks.shape == (3 * 5,) and masks.dtype == bool
    assert masks.reshape(3, 5)[:, -1].all()  # idle is always allowed


def test_action_masks_reach_through_gymnasium_make_wrappers():
    env = gymnasium.make("coreenv/CoRE-v1", num_nodes=3, num_slots=4, **FAST)
    env.reset(seed=0)
    np.testing.assert_array_equal(
        env.unwrapped.action_masks(), env.get_wrapper_attr("action_masks")()
    )
    assert env.get_wrapper_attr("action_masks")().shape == (3 * 5,)


def test_conflicts_are_resolved_by_the_env():
    env = CoreGymEnv(num_nodes=3, num_slots=3, arrival_prob=1.0, **FAST)
    env.reset(seed=0)
    env.step(np.array([3, 3, 3]))
    env.step(np.array([3, 3, 3]))  # two tasks have arrived
    _, _, _, _, info = env.step(np.array([0, 0, 1]))
    assert list(info["invalid_actions"]) == ["node_1"]


def test_bad_action_shape_is_refused():
    env = CoreGymEnv(**FAST)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.array([0, 1]))


def test_short_maskable_ppo_run_completes():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    pytest.importorskip("torch")
    # wrapped, as users get it
    env = gymnasium.make("coreenv/CoRE-v1", num_nodes=2, num_slots=3, **FAST)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0)
    model.learn(total_timesteps=128)
    obs, _ = env.reset(seed=1)
    masks = env.get_wrapper_attr("action_masks")()
    action, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert env.action_space.contains(action)


def test_the_event_form_says_how_many_steps_each_action_lasted():
    env = CoreGymEnv(decisions="events", arrival_prob=0.3)
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(env.config.num_nodes, np.int64))
    assert info["elapsed"] == env.env.t >= 1
