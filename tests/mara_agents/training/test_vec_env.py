"""The vectorised env: stacked arrays, restarts with fresh seeds, terminated vs truncated; the
batched core and one `CoreEnv` per episode give the same steps."""

import numpy as np
import pytest

pytest.importorskip("torch")

from helpers import SMALL_CURVES  # noqa: E402
from mara_agents.training import VecCoreEnv  # noqa: E402

ENV = dict(num_nodes=2, num_slots=3, arrival_prob=0.3, arrival_horizon=30, task_set=SMALL_CURVES)
BACKENDS = pytest.mark.parametrize("batched", [True, False], ids=["batched", "sequential"])
TIME = 2  # the observation's time feature, after the two nodes' one-hot ids


def idle(envs):
    return np.full((envs.num_envs, envs.config.num_nodes), envs.config.num_slots)


@BACKENDS
def test_reset_stacks_every_environment(batched):
    envs = VecCoreEnv(3, seed=5, batched=batched, **ENV)
    first = envs.reset()
    assert first.obs.shape == (3, 2, 2 + 3 + 3 * 9)
    assert first.obs.dtype == np.float32
    assert first.occupied.shape == (3, 3) and first.occupied.dtype == bool
    assert envs.seeds.next == 8  # seeds 5, 6, 7 started


@BACKENDS
def test_episodes_that_end_restart_and_report_how_they_ended(batched):
    envs = VecCoreEnv(2, seed=0, batched=batched, **ENV)
    envs.reset()
    ended = []
    for _ in range(400):
        step = envs.step(idle(envs))
        assert not step.truncated.any()  # the default max_steps is never reached
        np.testing.assert_array_equal(step.final_obs[~step.terminated], step.obs[~step.terminated])
        ended.append(step.terminated)
    assert np.any(ended) and len(envs.take_finished()) == int(np.sum(ended))
    assert envs.take_finished() == []


@BACKENDS
def test_truncation_is_reported_apart_with_the_state_it_cut(batched):
    envs = VecCoreEnv(2, seed=0, max_steps=4, batched=batched, **ENV)
    envs.reset()
    for t in range(4):
        step = envs.step(idle(envs))
        assert not step.terminated.any()
        assert step.truncated.all() == (t == 3)
    # the next episode started (its first observation is acted on), the cut one is kept
    assert (step.obs[:, 0, TIME] == 0).all() and (step.final_obs[:, 0, TIME] > 0).all()


def test_both_backends_give_the_same_steps_under_random_actions():
    rng = np.random.default_rng(0)
    batched, sequential = (VecCoreEnv(3, seed=11, batched=b, **ENV) for b in (True, False))
    for a, b in zip([batched.reset()], [sequential.reset()]):
        np.testing.assert_array_equal(a.obs, b.obs)
    for _ in range(300):
        actions = rng.integers(0, 4, size=(3, 2))
        a, b = batched.step(actions), sequential.step(actions)
        for field in ("obs", "occupied", "rewards", "terminated", "truncated", "final_obs"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    np.testing.assert_equal(batched.take_finished(), sequential.take_finished())  # NaN == NaN
