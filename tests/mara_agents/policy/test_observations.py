"""The observation dict -> arrays conversion: node order, dtypes, and the shared action mask."""

import numpy as np

import coreenv
from mara_agents.policy.observations import stack_observations


def test_stacks_nodes_in_the_order_given_with_the_shared_mask():
    env = coreenv.parallel_env(seed=0, arrival_prob=0.5)
    observations, _ = env.reset()
    for _ in range(5):  # let a few tasks arrive
        observations, *_ = env.step(dict.fromkeys(env.agents, env.config.num_slots))
    nodes = stack_observations(observations, env.agents)
    assert nodes.obs.dtype == np.float32 and nodes.obs.shape[0] == env.config.num_nodes
    for i, agent in enumerate(env.agents):
        np.testing.assert_array_equal(nodes.obs[i], observations[agent]["observation"])
    mask = observations[env.agents[0]]["action_mask"]
    assert nodes.action_mask.dtype == bool and nodes.action_mask.shape == mask.shape
    np.testing.assert_array_equal(nodes.action_mask, mask.astype(bool))
    np.testing.assert_array_equal(nodes.occupied, env.view().occupied[0])
    assert nodes.occupied.any()

    reversed_nodes = stack_observations(observations, env.agents[::-1])
    np.testing.assert_array_equal(reversed_nodes.obs, nodes.obs[::-1])
