"""The cluster options (design §1): nodes of different speeds, and a cost to move a task."""

import numpy as np
import pytest

from coreenv import BatchedCore, ConfigError, CoreEnv, EnvConfig
from coreenv.layout import (
    CLUSTER_FEATURES,
    GLOBAL_FEATURES,
    cluster_columns,
    slot_tables,
    slot_width,
    speed_columns,
)
from helpers import idle, scripted_env, task

K = 3


def make(schedule, **overrides):
    base = dict(num_nodes=2, num_slots=K, min_prefix=2, deadline_window=(40, 40))
    return scripted_env(schedule, **(base | overrides))


def serve(env, *slots):
    """Node i trains slots[i] (None: it idles)."""
    actions = idle(env)
    for agent, slot in zip(env.possible_agents, slots):
        if slot is not None:
            actions[agent] = slot
    return env.step(actions)


def started(**overrides):
    """An env whose one task (demand 12) has just entered slot 0."""
    env = make({0: [task(demand=12, window=40)]}, **overrides)
    env.step(idle(env))
    return env


def test_a_node_of_speed_s_trains_s_batches_per_step():
    env = started(node_speeds=(1, 3), batches_per_step=2)
    serve(env, None, 0)
    assert env.view().batches[0, 0] == 6
    serve(env, 0)
    assert env.view().batches[0, 0] == 8


def test_named_mixes_repeat_over_the_nodes():
    config = EnvConfig(num_nodes=6, node_speeds="mixed")
    assert config.speeds == (1, 1, 2, 4, 1, 1)
    assert EnvConfig().speeds == (1, 1, 1, 1)
    assert config.fastest_batches == 4


@pytest.mark.parametrize(
    "overrides, words",
    [
        (dict(node_speeds=(1, 2)), "node_speeds must be None"),
        (dict(node_speeds="fast"), "'mixed'"),
        (dict(node_speeds=(1, 0, 1, 1)), "ints >= 1"),
        (dict(switch_cost=-1), "switch_cost must be an int >= 0"),
        (dict(switch_cost=1.5), "switch_cost"),
    ],
)
def test_bad_cluster_options_are_named(overrides, words):
    with pytest.raises(ConfigError, match=words):
        EnvConfig(**overrides)


def test_moving_a_task_costs_switch_cost_steps_of_restoring():
    env = started(switch_cost=2)
    serve(env, 0)  # its first training costs nothing
    assert env.view().batches[0, 0] == 1
    serve(env, None, 0)  # node 1 takes it: two steps of restoring, then it trains
    serve(env, None, 0)
    assert env.view().batches[0, 0] == 1
    serve(env, None, 0)
    assert env.view().batches[0, 0] == 2
    metrics = env.metrics()
    assert (metrics["switches"], metrics["switch_steps"]) == (1, 2)
    assert metrics["utilisation"] > 0  # restoring keeps the node busy


def test_a_pause_costs_a_restore_on_the_same_node():
    env = started(switch_cost=1)
    serve(env, 0)
    serve(env)  # paused
    assert env.view().resume_cost[0, 0] == 1
    serve(env, 0)
    assert env.view().batches[0, 0] == 1
    serve(env, 0)
    assert env.view().batches[0, 0] == 2
    assert env.metrics()["switches"] == 1


def test_switches_are_counted_at_no_cost_and_lose_nothing():
    env = started()
    serve(env, 0)
    serve(env, None, 0)
    serve(env, 0)
    assert env.view().batches[0, 0] == 3
    assert (env.metrics()["switches"], env.metrics()["switch_steps"]) == (2, 0)


def test_the_view_says_where_a_task_trained_and_what_resuming_costs():
    env = started(switch_cost=3)
    view = env.view()
    assert (view.last_node[0, 0], view.resume_cost[0, 0]) == (-1, 0)
    serve(env, None, 0)
    view = env.view()
    assert (view.last_node[0, 0], view.resume_cost[0, 0]) == (1, 0)
    serve(env, 0)  # moved: restoring, 2 steps left after this one
    view = env.view()
    assert (view.last_node[0, 0], view.resume_cost[0, 0]) == (0, 2)
    assert view.speeds.tolist() == [[1, 1]] and view.switch_cost.tolist() == [3]


def test_the_observation_shows_speeds_and_each_slots_last_node():
    env = started(node_speeds=(1, 2), switch_cost=4)
    config = env.config
    serve(env, None, 0)
    serve(env)  # paused: resuming costs the whole switch cost
    obs = env.view().obs
    state = obs[0, 0, config.num_nodes :]
    speeds = state[len(GLOBAL_FEATURES) : len(GLOBAL_FEATURES) + speed_columns(config)]
    assert speeds.tolist() == [1.0, 2.0]
    block = slot_tables(obs, config.num_nodes, slot_width(config), speed_columns(config))[0, 0]
    last_node, resume_cost = block[cluster_columns(config)]
    assert len(CLUSTER_FEATURES) == 2
    assert last_node == pytest.approx(2 / 2)  # node 1 of 2
    assert resume_cost == pytest.approx(4 / config.time_scale)


def test_without_the_options_the_layout_is_unchanged():
    config = EnvConfig()
    assert not config.cluster_shown
    assert speed_columns(config) == 0 and cluster_columns(config).stop == slot_width(config)
    assert CoreEnv(config).observation_space("node_0")["observation"].shape == (
        config.num_nodes + len(GLOBAL_FEATURES) + config.num_slots * slot_width(config),
    )


@pytest.mark.parametrize("options", [dict(node_speeds="mixed", switch_cost=1), dict()])
def test_the_batched_engine_plays_the_cluster_as_one_env_does(options):
    config = EnvConfig(task_set="synthetic", arrival_prob=0.1, **options)
    core = BatchedCore(config, num_envs=2)
    core.reset([3, 4])
    envs = [CoreEnv(config) for _ in range(2)]
    for env, seed in zip(envs, [3, 4]):
        env.reset(seed=seed)
    rng = np.random.default_rng(0)
    for _ in range(200):  # well within the episodes: no lane restarts
        occupied = core.view().occupied
        actions = np.full((2, config.num_nodes), config.num_slots)  # idle
        for lane, slots in enumerate(occupied):
            served = rng.permutation(np.flatnonzero(slots))[: config.num_nodes]
            actions[lane, : served.size] = served
        core.step(actions)
        for env, row in zip(envs, actions):
            env.step(dict(zip(env.possible_agents, row.tolist())))
    for lane, env in enumerate(envs):
        np.testing.assert_equal(core.metrics()[lane], env.metrics())
        np.testing.assert_array_equal(core.view().obs[lane], env.view().obs[0])
    assert env.metrics()["switches"] > 0
