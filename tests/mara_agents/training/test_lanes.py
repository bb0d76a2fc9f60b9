"""The lanes PPO rolls out on: started at once, seeds in the order episodes start, ended
episodes restarted and reported, truncation apart from termination."""

import pickle

import numpy as np
import pytest

pytest.importorskip("torch")

from helpers import SMALL_CURVES  # noqa: E402
from mara_agents.training import SeedCounter, occupied, rollout_lanes  # noqa: E402

ENV = dict(num_nodes=2, num_slots=3, arrival_prob=0.3, arrival_horizon=30, task_set=SMALL_CURVES)
TIME = 2  # the observation's time feature, after the two nodes' one-hot ids


def idle(core):
    return np.full((core.num_envs, core.config.num_nodes), core.config.num_slots)


def test_lanes_start_on_consecutive_seeds_and_show_what_the_policy_reads():
    core = rollout_lanes(3, seed=5, **ENV)
    shown = core.view()
    assert shown.seed.tolist() == [5, 6, 7] and shown.obs.shape == (3, 2, 2 + 3 + 3 * 9)
    allowed = occupied(shown.action_mask)
    assert allowed.dtype == bool and allowed.shape == (3, 3)
    np.testing.assert_array_equal(allowed, shown.occupied)


def test_ended_episodes_restart_on_the_next_seed_in_start_order():
    core = rollout_lanes(2, seed=0, **ENV)
    started = [0, 1]
    for _ in range(400):
        step = core.step(idle(core))
        assert not step.truncated.any()  # the default max_steps is never reached
        ended = step.terminated.nonzero()[0].tolist()
        assert [seed for _, seed, _ in step.finished] == [started[lane] for lane in ended]
        for lane in ended:
            started[lane] = max(started) + 1
            assert step.seeds[lane] == started[lane]
    assert max(started) > 1


def test_truncation_is_reported_apart_with_the_state_it_cut():
    core = rollout_lanes(2, seed=0, max_steps=4, **ENV)
    for t in range(4):
        step = core.step(idle(core))
        assert not step.terminated.any()
        assert step.truncated.all() == (t == 3)
    # the next episode started (its first observation is acted on), the cut one is kept
    assert (step.obs[:, 0, TIME] == 0).all() and (step.final_obs[:, 0, TIME] > 0).all()


def test_the_seed_counter_pickles_where_it_stands():
    seeds = SeedCounter(3)
    next(seeds)
    assert next(pickle.loads(pickle.dumps(seeds))) == 4
