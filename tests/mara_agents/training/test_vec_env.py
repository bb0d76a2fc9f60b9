"""The vectorised env: stacked arrays, restarts with fresh seeds, terminated vs truncated."""

import numpy as np
import pytest

pytest.importorskip("torch")

from helpers import SMALL_CURVES  # noqa: E402
from mara_agents.training import VecCoreEnv  # noqa: E402

ENV = dict(num_nodes=2, num_slots=3, arrival_prob=0.3, arrival_horizon=30, task_set=SMALL_CURVES)


def idle(envs):
    return np.full((len(envs.envs), envs.config.num_nodes), envs.config.num_slots)


def test_reset_stacks_every_environment():
    envs = VecCoreEnv(3, seed=5, **ENV)
    first = envs.reset()
    assert first.obs.shape == (
        3,
        2,
        envs.envs[0].observation_space("node_0")["observation"].shape[0],
    )
    assert first.obs.dtype == np.float32
    assert first.occupied.shape == (3, 3) and first.occupied.dtype == bool
    assert envs.next_seed == 8  # seeds 5, 6, 7 started


def test_episodes_that_end_restart_and_report_how_they_ended():
    envs = VecCoreEnv(2, seed=0, **ENV)
    envs.reset()
    ended = []
    for _ in range(400):
        step = envs.step(idle(envs))
        assert not step.truncated.any()  # the default max_steps is never reached
        np.testing.assert_array_equal(step.final_obs[~step.terminated], step.obs[~step.terminated])
        ended.append(step.terminated)
    assert np.any(ended) and len(envs.take_finished()) == int(np.sum(ended))
    assert envs.take_finished() == []


def test_truncation_is_reported_apart_with_the_state_it_cut():
    envs = VecCoreEnv(2, seed=0, max_steps=4, **ENV)
    envs.reset()
    for t in range(4):
        step = envs.step(idle(envs))
        assert not step.terminated.any()
        assert step.truncated.all() == (t == 3)
    # the next episode started (its first observation is acted on), the cut one is kept
    restarted = [env.t for env in envs.envs]
    assert restarted == [0, 0]
    assert not np.array_equal(step.final_obs, step.obs)
