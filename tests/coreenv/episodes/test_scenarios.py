"""The stress scenario: deterministic, 13 of 20 feasible, FIFO/EDF 0%, oracle 65%."""

import numpy as np
import pytest

import coreenv
from helpers import tasks_met
from mara_agents import evaluate
from mara_agents.schedulers import EDF, FIFO, Oracle


def arrivals_of(env):
    """Every task of the episode, with the truth, in arrival order (idling throughout; the env
    needs slots enough for every task to reach one)."""
    env.reset()
    return tasks_met(env)


def test_stress_tasks_are_the_designed_ones():
    env = coreenv.parallel_env(scenario="infeasible_stress", seed=0, num_slots=20)
    tasks = arrivals_of(env)
    assert len(tasks) == 20
    infeasible, feasible = tasks[:7], tasks[7:]
    assert all(t.demand > t.deadline - t.arrival for t in infeasible)
    assert all(t.demand <= t.deadline - t.arrival for t in feasible)
    assert max(t.deadline for t in infeasible) < min(t.deadline for t in feasible)
    assert env.metrics()["feasibility_bound"] == pytest.approx(0.65)


def test_stress_is_the_same_whatever_the_seed():
    first = arrivals_of(coreenv.parallel_env(scenario="infeasible_stress", seed=0, num_slots=20))
    other = arrivals_of(coreenv.parallel_env(scenario="infeasible_stress", seed=99, num_slots=20))
    for a, b in zip(first, other):
        assert (a.demand, a.arrival, a.deadline, a.target) == (
            b.demand,
            b.arrival,
            b.deadline,
            b.target,
        )
        np.testing.assert_array_equal(a.curve, b.curve)


@pytest.mark.parametrize(("scheduler", "rate"), [(FIFO, 0.0), (EDF, 0.0), (Oracle, 0.65)])
def test_stress_rates(scheduler, rate):
    result = evaluate(scheduler(), episodes=3, seed=0, scenario="infeasible_stress")
    assert result["completion_rate"] == pytest.approx(rate)
    assert result["completion_rate_std"] == 0.0


def test_stress_with_two_batches_per_step_keeps_its_outcome():
    result = evaluate(
        Oracle(), episodes=1, seed=0, scenario="infeasible_stress", batches_per_step=2
    )
    assert result["completion_rate"] == pytest.approx(0.65)
    assert (
        evaluate(FIFO(), 1, 0, scenario="infeasible_stress", batches_per_step=2)["completion_rate"]
        == 0.0
    )


@pytest.mark.parametrize("overrides", [{"num_nodes": 8}, {"num_slots": 7}])
def test_stress_refuses_sizes_it_cannot_support(overrides):
    with pytest.raises(ValueError, match="infeasible_stress"):
        coreenv.parallel_env(scenario="infeasible_stress", **overrides)


def test_default_scenario_draws_independent_deadlines():
    env = coreenv.parallel_env(seed=4, arrival_horizon=3000, num_slots=40)
    tasks = arrivals_of(env)
    windows = np.array([t.deadline - t.arrival for t in tasks])
    demands = np.array([t.demand for t in tasks])
    low, high = env.config.deadline_window
    assert windows.min() >= low and windows.max() <= high
    assert abs(np.corrcoef(windows, demands)[0, 1]) < 0.25


def test_every_scenario_name_the_config_accepts_is_built():
    from coreenv.config import SCENARIO_NAMES
    from coreenv.episodes.scenarios import SCENARIOS

    assert tuple(SCENARIOS) == SCENARIO_NAMES
