"""PettingZoo's and Gymnasium's own checkers pass on every registered configuration."""

import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
)

import coreenv
from helpers import SMALL_CURVES, run_python

CONFIGS = {
    "default": {},
    "stress": {"scenario": "infeasible_stress"},
    "small": {"num_nodes": 1, "num_slots": 1, "arrival_prob": 0.3, "arrival_horizon": 60},
    "busy": {"num_nodes": 6, "num_slots": 6, "arrival_prob": 0.5, "arrival_horizon": 80},
    "two_batches_shaped": {"batches_per_step": 2, "shaping_beta": 1.0, "admission": "edf"},
    "quantiles": {"estimate_quantiles": (0.1, 0.5, 0.9)},
}
FAST = {"task_set": SMALL_CURVES, "deadline_window": (10, 60)}


def kwargs(name):
    return CONFIGS[name] if name == "stress" else FAST | CONFIGS[name]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parallel_api(name):
    parallel_api_test(coreenv.parallel_env(**kwargs(name)), num_cycles=3000)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_parallel_seed(name):
    parallel_seed_test(lambda: coreenv.parallel_env(**kwargs(name)))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_aec_api(name):
    api_test(coreenv.env(**kwargs(name)), num_cycles=500)


@pytest.mark.parametrize("decisions", ["step", "events"])
def test_aec_api_and_seeds_in_both_decision_forms(decisions):
    api_test(coreenv.env(decisions=decisions, **FAST), num_cycles=500)
    seed_test(lambda: coreenv.env(decisions=decisions, **kwargs("busy")), num_cycles=200)


@pytest.mark.parametrize("name", ["default", "busy", "small"])
def test_aec_live_masks_make_every_joint_action_a_matching(name):
    """Nodes that sample from their live masks never conflict; each sees what was taken."""
    env = coreenv.env(**kwargs(name))
    env.reset(seed=5)
    k = env.unwrapped.config.num_slots
    chosen = []
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if agent == env.possible_agents[0]:
            chosen = []
        taken = obs["observation"][-k:]
        np.testing.assert_array_equal(np.flatnonzero(taken), sorted(set(chosen) - {k}))
        assert all(obs["action_mask"][a] == 0 for a in chosen if a != k)
        action = env.action_space(agent).sample(obs["action_mask"])
        chosen.append(int(action))
        env.step(action)
    assert env.unwrapped.metrics()["conflicts"] == 0


def test_render_modes():
    render_test(lambda render_mode=None: coreenv.env(render_mode=render_mode, **FAST))


def test_pettingzoo_max_cycles_bounds_both_views():
    max_cycles_test(coreenv.core_v1)


def test_max_cycles_is_max_steps_and_conflicting_bounds_are_refused():
    assert coreenv.parallel_env(max_cycles=7).max_steps == 7
    assert coreenv.env(max_cycles=7, max_steps=7).unwrapped.max_steps == 7
    with pytest.raises(coreenv.ConfigError, match="max_cycles=7 and max_steps=8 disagree"):
        coreenv.parallel_env(max_cycles=7, max_steps=8)
    with pytest.raises(coreenv.ConfigError, match="disagree"):
        coreenv.parallel_env(config=coreenv.EnvConfig(max_steps=8), max_cycles=7)


def test_rollout_until_every_agent_is_done():
    env = coreenv.parallel_env(**FAST, seed=3)
    observations, _ = env.reset()
    steps = 0
    while env.agents:
        actions = {
            a: env.action_space(a).sample(observations[a]["action_mask"]) for a in env.agents
        }
        observations, *_ = env.step(actions)
        steps += 1
    assert 0 < steps <= env.max_steps


def test_registered_with_pettingzoo_and_gymnasium():
    par = pettingzoo.make("parallel", "coreenv/CoRE-v1", num_nodes=2)
    assert isinstance(par, coreenv.CoreEnv) and par.config.num_nodes == 2
    aec = pettingzoo.make("aec", "coreenv/CoRE-v1")
    assert aec.unwrapped.metadata["name"] == "core_v1"
    gym_env = gymnasium.make("coreenv/CoRE-v1", num_slots=4)
    assert gym_env.action_space.nvec.tolist() == [5, 5, 5, 5]


def test_importing_twice_does_not_warn():
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.reload(coreenv.registration).register_envs()


def test_spaces_are_cached_and_masks_are_int8():
    env = coreenv.parallel_env()
    observations, _ = env.reset(seed=0)
    for agent in env.agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        mask = observations[agent]["action_mask"]
        assert mask.dtype == np.int8 and mask[-1] == 1
    assert env.state().shape == env.state_space.shape


def test_importing_coreenv_does_not_import_torch():
    assert run_python("import sys, coreenv; print('torch' in sys.modules)").strip() == "False"
