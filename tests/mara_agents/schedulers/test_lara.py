"""LARA: explores, then serves what its predictor says can finish; a valid matching always."""

import math

import coreenv
from coreenv import Estimate
from helpers import idle, scripted_env, task
from mara_agents import evaluate
from mara_agents.schedulers import LARA


class MarksTaskInfeasible:
    """Says task with initial loss ``doomed`` needs forever; the others need 1 batch."""

    def __init__(self, doomed_prefix_start):
        self.doomed = doomed_prefix_start

    def estimate(self, prefix, target, budget):
        if prefix[0] == self.doomed:
            return Estimate(math.inf, 0.0)
        return Estimate(1.0, 1.0)


def test_lara_never_assigns_two_nodes_to_one_task():
    env = coreenv.parallel_env(seed=0, arrival_prob=0.1, arrival_horizon=400, num_nodes=3)
    observations, infos = env.reset()
    lara = LARA()
    lara.reset(env)
    while env.agents:
        actions = lara.act(observations, infos)
        chosen = [a for a in actions.values() if a != env.config.num_slots]
        assert len(chosen) == len(set(chosen))
        observations, _, _, _, infos = env.step(actions)
    assert env.metrics()["conflicts"] == 0


def test_lara_explores_first_then_drops_what_its_predictor_marks_infeasible():
    from helpers import power_curve

    doomed_curve = power_curve(60, scale=5.0)  # initial loss 5.0 identifies it
    env = scripted_env(
        {0: [task(50, 30, doomed_curve)], 1: [task(50, 60)]}, num_nodes=1, num_slots=2
    )
    lara = LARA(predictor=MarksTaskInfeasible(5.0), explore=2)
    lara.reset(env)
    env.step(idle(env))  # the doomed task arrives (earliest deadline)
    env.step(idle(env))  # the other arrives
    served = []
    for _ in range(6):
        actions = lara.act({}, {})
        served.append(int(env.view().uid[0, actions["node_0"]]))
        env.step(actions)
    assert served[:4] == [0, 0, 1, 1]  # exploration: 2 batches each, earliest deadline first
    assert served[4:] == [1, 1]  # then the doomed task is dropped


def test_lara_does_not_leave_nodes_idle_while_tasks_wait():
    result = evaluate(LARA(), episodes=1, seed=3, arrival_horizon=300)
    assert result["utilisation"] > 0.5
