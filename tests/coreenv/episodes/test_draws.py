"""Drawing a whole episode at reset: the batched engine's bank replay, in bulk or call by call,
gives the scenario's tasks."""

import numpy as np
import pytest
from gymnasium.utils import seeding

from coreenv import CoreEnv, EnvConfig
from coreenv.episodes import draws
from coreenv.episodes.curve_stores import BankCurves
from coreenv.episodes.draws import TaskRanges, bulk_agrees, bulk_draws, scalar_draws
from coreenv.episodes.drawer import EpisodeDrawer
from coreenv.curves import CurveBank, named_task_set
from coreenv.curves.targets import target_at_fraction
from helpers import tasks_met


@pytest.mark.parametrize(
    "ranges",
    [
        TaskRanges(384, (0.03, 0.35), (150, 400)),
        TaskRanges(2, (0.5, 0.5), (1, 2)),
        TaskRanges(7, (0.01, 1.0), (3, 1000)),
    ],
)
def test_bulk_draws_equal_the_generator_calls(ranges):
    assert bulk_agrees(ranges)
    for seed in range(50):
        expected = scalar_draws(seeding.np_random(seed)[0], 1 + seed, ranges)
        got = bulk_draws(seeding.np_random(seed)[0], 1 + seed, ranges)
        for a, b in zip(expected, got):
            np.testing.assert_array_equal(a, b)


def test_bulk_draws_decline_ranges_that_draw_nothing_and_redraws():
    assert not bulk_agrees(TaskRanges(1, (0.1, 0.2), (5, 9)))  # integers(1) draws nothing
    assert not bulk_agrees(TaskRanges(9, (0.1, 0.2), (5, 5)))
    assert draws._lemire(np.zeros(3, np.uint64), 3) is None  # leftover 0 < threshold: redraw


def episode_tasks(drawer, seed):
    return drawer.draw(0, seeding.np_random(seed)[0])


def env_tasks(config, seed):
    """(arrival, deadline, target, demand) of every task CoreEnv meets on ``seed``."""
    env = CoreEnv(config)
    env.reset(seed=seed)
    return [(t.arrival, t.deadline, t.target, t.demand) for t in tasks_met(env)]


@pytest.mark.parametrize("bulk", [True, False])
def test_an_episode_drawn_at_reset_is_the_one_core_env_meets(bulk, monkeypatch):
    config = EnvConfig(task_set="id", arrival_horizon=300, arrival_prob=0.1, num_slots=40)
    env = CoreEnv(config)
    drawer = EpisodeDrawer(config, env.scenario, env.source, 1)
    drawer.bulk = bulk
    for seed in (3, 4):
        tasks = episode_tasks(drawer, seed)
        drawn = list(zip(tasks.arrival, tasks.deadline, tasks.target, tasks.crossing))
        assert drawn == env_tasks(config, seed)


def test_a_redraw_falls_back_to_the_generator_calls(monkeypatch):
    config = EnvConfig(task_set="id", arrival_horizon=300, arrival_prob=0.1, num_slots=40)
    env = CoreEnv(config)
    drawer = EpisodeDrawer(config, env.scenario, env.source, 1)
    expected = episode_tasks(drawer, 5)
    monkeypatch.setattr("coreenv.episodes.drawer.bulk_draws", lambda *args: None)
    got = episode_tasks(drawer, 5)
    np.testing.assert_array_equal(got.target, expected.target)
    np.testing.assert_array_equal(got.deadline, expected.deadline)


@pytest.mark.parametrize("bulk", [True, False])
def test_the_bank_replay_draws_the_scenarios_tasks_and_leaves_the_generator_as_it_does(bulk):
    config = EnvConfig(task_set="id", arrival_horizon=300, arrival_prob=0.1, num_slots=40)
    env = CoreEnv(config)
    drawer = EpisodeDrawer(config, env.scenario, env.source, 1)
    drawer.bulk = bulk
    for seed in (3, 4):
        replayed, generator = drawer.draw(0, seeding.np_random(seed)[0]), seeding.np_random(seed)[0]
        drawn = env.scenario.draw_episode(generator)
        assert replayed.arrival.tolist() == [t + 1 for t, _ in drawn]
        assert replayed.target.tolist() == [draw.target for _, draw in drawn]
        assert replayed.crossing.tolist() == [draw.demand for _, draw in drawn]
        rng = seeding.np_random(seed)[0]
        drawer.draw(0, rng)
        assert future(rng) == future(generator)


def future(rng):
    """What decides a generator's next draws: a buffered half counts only when flagged."""
    state = rng.bit_generator.state
    return state["state"], state["has_uint32"], state["uinteger"] * state["has_uint32"]


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
