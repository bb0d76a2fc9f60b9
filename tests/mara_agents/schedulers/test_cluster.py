"""What the planners read of the cluster: capacity in fastest-node units, restores, node choice."""

import numpy as np
import pytest

import coreenv
from mara_agents import evaluate
from mara_agents.schedulers import LARA, Oracle
from mara_agents.schedulers.base import serve_orders
from mara_agents.schedulers.cluster import assign_nodes, plan_capacity, restore_steps


def view_of(**options):
    env = coreenv.parallel_env(seed=3, arrival_prob=0.3, task_set="synthetic", **options)
    env.reset()
    for _ in range(3):
        env.step({agent: 0 for agent in env.agents})
    return env.view()


def test_equal_nodes_plan_as_before():
    view = view_of()
    assert plan_capacity(view, 0, 1) == (1, 3.0)
    assert plan_capacity(view, 0, 4) == (1, 0.0)
    orders = [np.array([2, 0, 1])]
    np.testing.assert_array_equal(assign_nodes(view, orders), serve_orders(view, orders))


def test_mixed_speeds_count_in_the_fastest_nodes_units():
    view = view_of(node_speeds=(1, 4, 2, 1), batches_per_step=2)
    assert plan_capacity(view, 0, 0) == (8, 2.0)  # 8 speed units = 2 nodes of speed 4
    assert plan_capacity(view, 0, 1) == (4, 2.0)  # the speed-4 node explores: 2 + 1 + 1


def test_the_first_slots_of_an_order_get_the_fastest_nodes():
    view = view_of(node_speeds=(1, 4, 2, 1))
    actions = assign_nodes(view, [np.array([5, 6])])
    assert actions[0].tolist() == [8, 5, 6, 8]  # 8 = K: idle


def test_with_a_switch_cost_a_task_keeps_its_free_node():
    view = view_of(switch_cost=3)  # slot 0 trained on node 0 at every step so far
    assert view.last_node[0, 0] == 0 and restore_steps(view, 0, np.array([0])).tolist() == [0]
    actions = assign_nodes(view, [np.array([1, 0])])
    assert actions[0, 0] == 0 and actions[0, 1] == 1


@pytest.mark.parametrize("scheduler", [LARA(), Oracle()])
def test_planners_play_mixed_clusters_with_a_cost_without_invalid_actions(scheduler):
    options = dict(task_set="synthetic", node_speeds="mixed", switch_cost=5, arrival_horizon=200)
    result = evaluate(scheduler, episodes=2, seed=11, **options)
    assert result["conflicts"] == 0
    assert result["successes"] > 0


def test_lara_moves_tasks_less_where_moving_costs():
    options = dict(task_set="synthetic", arrival_horizon=300)
    costly = evaluate(LARA(), episodes=3, seed=5, switch_cost=5, **options)
    free = evaluate(LARA(), episodes=3, seed=5, **options)
    assert costly["switch_steps"] > 0 and free["switch_steps"] == 0
    assert costly["switches"] < free["switches"]
