"""studies/cluster/blind.py: planners that see a cluster of equal nodes with free moves."""

import numpy as np

import coreenv
from helpers import STUDIES, load_script
from mara_agents.schedulers import LARA

blind = load_script("blind", STUDIES / "cluster")


def test_a_blind_view_shows_equal_nodes_and_free_moves():
    env = coreenv.parallel_env(seed=1, task_set="synthetic", node_speeds="mixed", switch_cost=5)
    env.reset()
    view = blind.blind(env.view())
    assert view.speeds.tolist() == [[1, 1, 1, 1]] and view.switch_cost.tolist() == [0]
    assert view.last_node is None and view.resume_cost is None


def test_blind_lara_acts_as_lara_on_a_cluster_of_equal_nodes():
    env = coreenv.parallel_env(seed=2, task_set="synthetic", arrival_prob=0.3)
    env.reset()
    for _ in range(20):
        view = env.view()
        np.testing.assert_array_equal(blind.BlindLARA().act_view(view), LARA().act_view(view))
        env.step(dict(zip(env.agents, LARA().act_view(view)[0].tolist())))


def test_the_blind_planners_are_named_after_the_sweep_s_methods():
    assert blind.BlindLARA.name == "lara_blind" and blind.BlindHOP.name == "hop_blind"
