"""Drawing a whole episode at reset: the batched engine's bank tables give the scenario's tasks."""

import numpy as np
import pytest

from coreenv import CoreEnv, EnvConfig
from coreenv.core.curve_stores import BankCurves
from coreenv.core.episodes import EpisodeDrawer
from coreenv.curves import CurveBank, named_task_set
from coreenv.curves.targets import target_at_fraction


def episode_tasks(drawer, seed):
    return drawer.draw(0, seed)


def env_tasks(config, seed):
    """(arrival, deadline, target, demand) of every task CoreEnv meets on ``seed``."""
    env = CoreEnv(config)
    env.reset(seed=seed)
    seen = {}
    while env.agents:
        truth = env.oracle_view()
        for task in [*filter(None, truth.slots), *truth.waiting]:
            seen[task.uid] = (task.arrival, task.deadline, task.target, task.demand)
        env.step({})
    return [seen[uid] for uid in sorted(seen)]


def test_an_episode_drawn_at_reset_is_the_one_core_env_meets():
    config = EnvConfig(task_set="id", arrival_horizon=300, arrival_prob=0.1, num_slots=40)
    env = CoreEnv(config)
    drawer = EpisodeDrawer(config, env.scenario, env.source, 1)
    for seed in (3, 4):
        tasks = episode_tasks(drawer, seed)
        drawn = list(zip(tasks.arrival, tasks.deadline, tasks.target, tasks.crossing))
        assert drawn == env_tasks(config, seed)


def rising_bank():
    """Curves that rise before they fall (the rare branch of `target_at_fraction`)."""
    n = np.arange(60.0)
    rows = [1.0 + 0.01 * np.minimum(n, 30) - 0.02 * np.maximum(n - 30, 0), 2.0 / (1.0 + n)]
    rows.append(np.r_[1.0, 1.0, 1.0, 0.5, 0.5, 0.25, np.full(54, 0.25)])  # ties in the minimum
    losses = np.array(rows)
    return CurveBank(losses, ["rise", "fall", "flat"], name="rising")


@pytest.mark.parametrize("bank", [rising_bank(), named_task_set("id")])
def test_bank_targets_equal_target_at_fraction(bank):
    tables = BankCurves.of(bank)
    rng = np.random.default_rng(0)
    rows = rng.integers(len(bank), size=400)
    fractions = np.r_[rng.uniform(0.0, 1.0, 397), 0.5 / 59, 1.0, 1e-9]
    targets, demands = tables.targets(rows, fractions)
    for row, fraction, target, demand in zip(rows, fractions, targets, demands):
        assert (target, demand) == target_at_fraction(bank.curve(row).losses, fraction)
