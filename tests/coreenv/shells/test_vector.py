"""Gymnasium's vector form: N lanes equal N `CoreGymEnv`s on the scheduled seeds, bit for bit."""

import gymnasium
import numpy as np
import pettingzoo
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coreenv
from coreenv import ConfigError, CoreEnv, CoreGymEnv, CoreVectorEnv
from coreenv.shells.vector import LaneSeeds
from helpers import SMALL_CURVES

SHORT = {
    "task_set": SMALL_CURVES,
    "deadline_window": (5, 30),
    "arrival_horizon": 40,
    "num_nodes": 2,
    "num_slots": 3,
}


def make_vec(num_envs, **overrides):
    return gymnasium.make_vec(
        "coreenv/CoRE-v1",
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        **{**SHORT, **overrides},
    )


def test_make_vec_gives_the_batched_form_with_same_step_autoreset_and_batched_spaces():
    envs = make_vec(3)
    assert isinstance(envs, CoreVectorEnv)
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    single = CoreGymEnv(**SHORT)
    assert envs.single_observation_space == single.observation_space
    assert envs.single_action_space == single.action_space
    assert envs.observation_space.shape == (3, *single.observation_space.shape)
    assert envs.action_space.shape == (3, 2)
    obs, infos = envs.reset(seed=7)
    assert obs in envs.observation_space
    assert infos["episode_seed"].tolist() == [7, 8, 9]
    assert envs.action_masks().shape == (3, 2 * 4) and envs.action_masks().dtype == bool


def test_lane_seeds_give_each_lane_every_nth_seed():
    seeds = LaneSeeds(np.array([10, 11, 12]))
    assert [seeds(1), seeds(1), seeds(0), seeds(1)] == [11, 14, 10, 17]
    assert seeds.upcoming().tolist() == [13, 20, 12]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    num_envs=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    view=st.sampled_from(["state", "nodes"]),
    shaping_beta=st.sampled_from([0.0, 1.0]),
    action_seed=st.integers(0, 1_000),
    decisions=st.sampled_from(["step", "events"]),
)
def test_every_lane_equals_a_single_environment_on_its_scheduled_seeds(
    num_envs, seed, view, shaping_beta, action_seed, decisions
):
    config = {**SHORT, "shaping_beta": shaping_beta}
    envs = CoreVectorEnv(num_envs, view=view, decisions=decisions, **config)
    singles = [CoreEnv(decisions=decisions, **config) for _ in range(num_envs)]
    agents = singles[0].possible_agents
    episodes = [0] * num_envs

    def shown(lane, observations):
        """What this view shows of ``lane``'s single environment."""
        if view == "state":
            return singles[lane].state()
        return np.stack([observations[agent]["observation"] for agent in agents])

    obs, _ = envs.reset(seed=seed)
    for lane, single in enumerate(singles):
        np.testing.assert_array_equal(obs[lane], shown(lane, single.reset(seed=seed + lane)[0]))
    rng = np.random.default_rng(action_seed)
    ended = 0
    for _ in range(150):
        actions = rng.integers(-1, SHORT["num_slots"] + 2, (num_envs, SHORT["num_nodes"]))
        masks = np.stack([single.action_masks().astype(bool).ravel() for single in singles])
        np.testing.assert_array_equal(envs.action_masks(), masks)
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        for lane, single in enumerate(singles):
            result = single.step(dict(zip(agents, actions[lane])))
            observations, reward, done, cut, info = (part[agents[0]] for part in result)
            last = shown(lane, result[0])
            assert rewards[lane] == reward  # bit for bit: the same float operations
            assert (terminated[lane], truncated[lane]) == (done, cut)
            assert infos["successes"][lane] == info["successes"]
            if decisions == "events":
                assert infos["elapsed"][lane] == info["elapsed"]
            invalid = sum("invalid_action" in i for i in result[4].values())
            assert infos["invalid_actions"][lane] == invalid
            if done or cut:
                ended += 1
                assert infos["_final_obs"][lane]
                np.testing.assert_array_equal(infos["final_obs"][lane], last)
                for name, value in info["metrics"].items():
                    np.testing.assert_equal(infos["final_info"]["metrics"][name][lane], value)
                episodes[lane] += 1
                first = single.reset(seed=seed + lane + episodes[lane] * num_envs)[0]
                last = shown(lane, first)
            else:
                assert "_final_obs" not in infos or not infos["_final_obs"][lane]
            np.testing.assert_array_equal(obs[lane], last)
    assert ended > 0  # auto-resets were exercised


def test_the_same_seed_gives_the_same_episodes_and_a_seedless_reset_continues():
    first, second = make_vec(2), make_vec(2)
    actions = np.zeros((2, 2), np.int64)
    shown = [envs.reset(seed=3)[0] for envs in (first, second)]
    np.testing.assert_array_equal(*shown)
    for _ in range(60):
        steps = [envs.step(actions) for envs in (first, second)]
        np.testing.assert_array_equal(steps[0][0], steps[1][0])
        np.testing.assert_array_equal(steps[0][1], steps[1][1])
    upcoming = first.seeds.upcoming()
    assert (upcoming > [3, 4]).all()  # episodes ended: each lane moved on by two seeds a time
    assert first.reset()[1]["episode_seed"].tolist() == upcoming.tolist()
    fresh = make_vec(2, seed=5)
    assert fresh.reset()[1]["episode_seed"].tolist() == [5, 6]  # config.seed the first time


def test_reset_takes_one_seed_per_lane():
    envs = make_vec(2)
    assert envs.reset(seed=[4, 9])[1]["episode_seed"].tolist() == [4, 9]
    with pytest.raises(ValueError, match=r"an int or one seed per lane \(2\), got 3 seeds"):
        envs.reset(seed=[1, 2, 3])


def test_node_masks_give_every_node_its_lanes_mask():
    envs = make_vec(2, view="nodes")
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (2, 2, CoreEnv(**SHORT).observation_space("node_0")["observation"].shape[0])
    masks = envs.node_action_masks()
    assert masks.shape == (2, 2, 4)
    assert (masks[:, 0] == masks[:, 1]).all() and masks[..., -1].all()


def test_bad_view_and_step_before_reset_are_refused():
    with pytest.raises(ConfigError, match=r"view must be one of \('state', 'nodes'\), got 'x'"):
        CoreVectorEnv(2, view="x", **SHORT)
    envs = CoreVectorEnv(2, **SHORT)
    with pytest.raises(RuntimeError, match="before reset"):
        envs.step(np.zeros((2, 2), np.int64))
    with pytest.raises(RuntimeError, match="before reset"):
        envs.action_masks()


def test_invalid_actions_follow_the_configured_policy():
    envs = CoreVectorEnv(2, invalid_action="raise", **SHORT)
    envs.reset(seed=0)
    with pytest.raises(coreenv.InvalidActionError, match="lane 0"):
        envs.step(np.array([[5, 0], [3, 3]]))


@pytest.mark.parametrize(
    "make",
    [
        lambda: gymnasium.make("coreenv/CoRE-v0"),
        lambda: pettingzoo.make("parallel", "coreenv/CoRE-v0"),
        lambda: pettingzoo.make("aec", "coreenv/CoRE-v0"),
        lambda: coreenv.core_v0.parallel_env(),
    ],
)
def test_the_retired_version_0_says_to_use_version_1(make):
    with pytest.raises(ConfigError, match="CoRE-v0 .* is retired.*Use coreenv/CoRE-v1"):
        make()


def test_the_event_form_refuses_actions_of_the_wrong_shape_or_kind():
    envs = CoreVectorEnv(2, decisions="events", **SHORT)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(num_envs, num_nodes\) = \(2, 2\), got \(2, 3\)"):
        envs.step(np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match="must be integers"):
        envs.step(np.zeros((2, 2)))
