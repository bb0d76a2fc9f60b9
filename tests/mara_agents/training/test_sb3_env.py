"""The SB3 vector form: SB3's VecEnv API over coreenv's vector envs; MaskablePPO trains on it."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")

from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from coreenv import CoreVectorEnv, SequentialVectorEnv  # noqa: E402
from helpers import SMALL_CURVES  # noqa: E402
from mara_agents.training.sb3_env import SB3VecEnv  # noqa: E402

SHORT = {"task_set": SMALL_CURVES, "deadline_window": (5, 30), "arrival_horizon": 40}


def sb3_env(num_envs=4, **overrides):
    return SB3VecEnv(CoreVectorEnv(num_envs, num_nodes=2, num_slots=3, **SHORT, **overrides))


def test_seeded_reset_and_steps_match_the_gymnasium_vector_form():
    env, reference = sb3_env(), CoreVectorEnv(4, num_nodes=2, num_slots=3, **SHORT)
    env.seed(11)
    np.testing.assert_array_equal(env.reset(), reference.reset(seed=11)[0])
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(80):
        actions = rng.integers(0, 4, (4, 2))
        obs, rewards, dones, infos = env.step(actions)
        expected, reward, terminated, truncated, info = reference.step(actions)
        np.testing.assert_array_equal(obs, expected)
        np.testing.assert_array_equal(rewards, reward.astype(np.float32))
        np.testing.assert_array_equal(dones, terminated | truncated)
        for lane in np.flatnonzero(dones):
            ended += 1
            np.testing.assert_array_equal(
                infos[lane]["terminal_observation"], info["final_obs"][lane]
            )
            assert infos[lane]["TimeLimit.truncated"] == bool(truncated[lane])
            assert 0.0 <= infos[lane]["metrics"]["completion_rate"] <= 1.0
    assert ended > 0


def test_masks_are_answered_lane_by_lane_as_maskable_ppo_asks():
    env = sb3_env()
    env.reset()
    masks = np.stack(env.env_method("action_masks"))
    assert masks.shape == (4, 2 * 4) and masks.dtype == bool
    assert env.has_attr("action_masks")
    assert len(env.env_method("action_masks", indices=[1, 3])) == 2
    with pytest.raises(AttributeError, match="answers env_method for"):
        env.env_method("render")
    with pytest.raises(ValueError, match="lanes share 'view'"):
        env.set_attr("view", "nodes", indices=[0])


def test_the_nodes_view_is_refused():
    with pytest.raises(ValueError, match="needs the 'state' view"):
        SB3VecEnv(CoreVectorEnv(2, view="nodes", **SHORT))


def test_maskable_ppo_trains_on_it_and_never_picks_a_masked_slot():
    torch.set_num_threads(1)
    env = VecMonitor(sb3_env(8))
    assert isinstance(env, VecEnv)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, seed=0)
    model.learn(512)
    obs = env.reset()
    for _ in range(50):
        masks = np.stack(env.env_method("action_masks")).reshape(8, 2, 4)
        actions, _ = model.predict(obs, action_masks=masks.reshape(8, -1))
        assert np.take_along_axis(masks, actions[..., None], axis=2).all()
        obs, *_ = env.step(actions)


def test_sb3_vec_check_nan_finds_no_invalid_value_in_random_play():
    from stable_baselines3.common.vec_env import VecCheckNan

    env = VecCheckNan(sb3_env(), raise_exception=True)
    env.seed(0)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(100):
        env.step(rng.integers(0, 4, (4, 2)))  # raises on a NaN or inf in observations or rewards


def test_the_event_form_reaches_sb3_with_each_lanes_elapsed_steps():
    env = sb3_env(decisions="events")
    reference = CoreVectorEnv(4, num_nodes=2, num_slots=3, decisions="events", **SHORT)
    env.seed(3)
    np.testing.assert_array_equal(env.reset(), reference.reset(seed=3)[0])
    for _ in range(20):
        obs, rewards, dones, infos = env.step(np.zeros((4, 2), np.int64))
        expected, reward, _, _, info = reference.step(np.zeros((4, 2), np.int64))
        np.testing.assert_array_equal(obs, expected)
        assert [lane["elapsed"] for lane in infos] == info["elapsed"].tolist()
        assert all(1 <= lane["elapsed"] <= 8 for lane in infos)


def test_the_sequential_vector_form_reaches_sb3_as_the_gymnasium_form_gives_it():
    def sequential():
        return SequentialVectorEnv(4, num_nodes=2, num_slots=3, decisions="events", **SHORT)

    env, reference = SB3VecEnv(sequential()), sequential()
    env.seed(5)
    np.testing.assert_array_equal(env.reset(), reference.reset(seed=5)[0])
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(200):
        masks = env.action_masks()
        assert masks.shape == (4, 4) and masks.all(axis=0)[-1]  # idle always allowed
        np.testing.assert_array_equal(masks, reference.action_masks())
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in masks])
        obs, rewards, dones, infos = env.step(actions)
        expected, reward, terminated, truncated, info = reference.step(actions)
        np.testing.assert_array_equal(obs, expected)
        np.testing.assert_array_equal(rewards, reward.astype(np.float32))
        assert [lane["elapsed"] for lane in infos] == info["elapsed"].tolist()
        for lane in np.flatnonzero(dones):
            ended += 1
            np.testing.assert_array_equal(
                infos[lane]["terminal_observation"], info["final_obs"][lane]
            )
    assert ended > 0
