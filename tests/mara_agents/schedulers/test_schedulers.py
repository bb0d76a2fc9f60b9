"""Schedulers give feasible matchings; FIFO/EDF order, random reproducibility, oracle planning;
every classic scheduler acts on views of many episodes at once with unchanged rows."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coreenv
from helpers import OneByOne, play_checking_matchings, run_python, scripted_env, task
from mara_agents.evaluation import run_episodes
from mara_agents.predictors import WLSPredictor
from mara_agents.schedulers import EDF, FIFO, HOP, LARA, Oracle, RandomScheduler
from mara_agents.schedulers.base import EpisodeMemo, acts_in_batches
from mara_agents.schedulers.hop import HOP_TUNED
from mara_agents.schedulers.planning import feasible, plan, select_feasible

ALL = [FIFO, EDF, RandomScheduler, Oracle]


@pytest.mark.parametrize("scheduler_class", ALL)
def test_every_action_is_a_valid_matching(scheduler_class):
    env = coreenv.parallel_env(seed=0, arrival_prob=0.2, arrival_horizon=300)
    play_checking_matchings(env, scheduler_class())


def three_tasks_env():
    # deadlines 41, 12, 23 for arrivals 1, 2, 3; two nodes
    return scripted_env(
        {0: [task(20, 40)], 1: [task(20, 10)], 2: [task(20, 20)]}, num_nodes=2, num_slots=4
    )


def run_until_all_arrived(env, scheduler):
    observations, infos = env.reset(seed=0)
    scheduler.reset(env)
    for _ in range(3):
        observations, *_, infos = env.step({})
    return scheduler.act(observations, infos)


def test_fifo_serves_the_oldest_tasks():
    assert run_until_all_arrived(three_tasks_env(), FIFO()) == {"node_0": 0, "node_1": 1}


def test_edf_serves_the_earliest_deadlines():
    assert run_until_all_arrived(three_tasks_env(), EDF()) == {"node_0": 1, "node_1": 2}


def test_oracle_skips_the_hopeless():
    # task in slot 1 needs 20 batches but has 9 steps left: the oracle serves slots 2 and 0
    actions = run_until_all_arrived(three_tasks_env(), Oracle())
    assert actions == {"node_0": 2, "node_1": 0}


def test_random_scheduler_replays_an_episode_from_its_seed():
    def run(seed):
        env = coreenv.parallel_env(seed=3, arrival_prob=0.2, arrival_horizon=200)
        observations, infos = env.reset()
        scheduler = RandomScheduler(seed=seed)
        scheduler.reset(env)
        actions = []
        while env.agents:
            actions.append(scheduler.act(observations, infos))
            observations, *_, infos = env.step(actions[-1])
        return actions

    assert run(0) == run(0)
    assert run(0) != run(1)


@pytest.mark.parametrize(
    ("steps", "time_left", "nodes", "expected"),
    [
        ([3], [3], 1, True),
        ([4], [3], 4, False),  # one node per task per step: no parallel speed-up
        ([2, 2], [2, 2], 1, False),
        ([2, 2], [2, 4], 1, True),
        ([3, 3, 3], [3, 3, 3], 2, False),
        ([2, 2, 2], [3, 3, 3], 2, True),  # 6 units in 2 x 3 slots, McNaughton wrap-around
        ([3, 1, 1], [3, 2, 2], 2, True),
        ([3, 2, 2], [3, 2, 2], 2, False),
        ([], [], 3, True),
    ],
)
def test_feasibility_on_hand_sized_cases(steps, time_left, nodes, expected):
    assert feasible(np.array(steps), np.array(time_left), nodes) is expected


def test_select_feasible_drops_the_longest_when_overloaded():
    steps, time_left = np.array([2, 5, 2, 9]), np.array([3, 5, 4, 8])
    chosen = select_feasible(steps, time_left, num_nodes=1)
    assert chosen.tolist() == [True, False, True, False]  # 5 is dropped; 9 > 8 is hopeless
    order = plan(steps, time_left, num_nodes=1)
    assert order.tolist() == [0, 2, 1]  # chosen by deadline, then the other feasible-alone task


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 30), st.integers(1, 40)), min_size=0, max_size=8),
    st.integers(1, 4),
)
def test_selected_set_is_always_feasible_and_plan_is_a_permutation(tasks, nodes):
    steps = np.array([s for s, _ in tasks], np.int64)
    time_left = np.array([d for _, d in tasks], np.int64)
    chosen = select_feasible(steps, time_left, nodes)
    assert feasible(steps[chosen], time_left[chosen], nodes)
    order = plan(steps, time_left, nodes)
    assert len(set(order.tolist())) == len(order)
    assert set(order.tolist()) == set(np.flatnonzero(steps <= time_left).tolist())


def test_mara_is_a_public_name_imported_lazily():
    code = (
        "import sys\n"
        "from mara_agents.schedulers import FIFO\n"
        "assert 'torch' not in sys.modules, 'importing FIFO imported torch'\n"
        "from mara_agents.schedulers import MARA\n"
        "print(MARA.__name__, 'torch' in sys.modules)\n"
    )
    assert run_python(code).split() == ["MARA", "True"]


@pytest.mark.parametrize(
    "make",
    [
        FIFO,
        EDF,
        Oracle,
        lambda: RandomScheduler(seed=4),
        lambda: LARA(),
        lambda: HOP(WLSPredictor(), HOP_TUNED),
    ],
    ids=["fifo", "edf", "oracle", "random", "lara", "hop_wls"],
)
def test_classic_schedulers_in_lockstep_give_the_rows_of_one_episode_at_a_time(make):
    """Each acts on a SchedulerView of all episodes at once; the rows are unchanged."""
    configs = [  # one lockstep run, one view: episodes of both configs side by side
        coreenv.EnvConfig(arrival_prob=0.05, arrival_horizon=150),
        coreenv.EnvConfig(arrival_prob=0.12, arrival_horizon=150, batches_per_step=2),
    ]
    episodes = [(config, seed) for config in configs for seed in (0, 1, 2, 0)]
    assert acts_in_batches(make())
    alone = run_episodes(OneByOne(make()), episodes)
    np.testing.assert_equal(run_episodes(make(), episodes), alone)


def test_the_oracle_refuses_a_view_without_the_truth():
    env = coreenv.parallel_env(seed=0, arrival_prob=0.2, arrival_horizon=50)
    env.reset()
    with pytest.raises(ValueError, match="clairvoyant"):
        Oracle().act_view(env.view())


class Counting:
    """A computation that records which (episode, slot) pairs it was asked for."""

    def __init__(self):
        self.asked = []

    def __call__(self, episodes, slots):
        self.asked.extend(zip(episodes.tolist(), slots.tolist()))
        return [10 * e + j for e, j in zip(episodes.tolist(), slots.tolist())]


def test_episode_memo_computes_once_per_task_prefix_and_forgets_finished_episodes():
    core = coreenv.BatchedCore(coreenv.EnvConfig(arrival_prob=0.3, arrival_horizon=30), 2)
    core.reset([1, 2])
    for _ in range(3):  # let tasks arrive
        core.step(np.full((2, core.config.num_nodes), core.config.num_slots))
    view = core.view()
    episodes, slots = np.nonzero(view.occupied)
    memo, compute = EpisodeMemo(), Counting()
    first = memo.rows(view, episodes, slots, compute)
    assert first == [10 * e + j for e, j in zip(episodes, slots)] and len(compute.asked) > 0
    asked = len(compute.asked)
    assert memo.rows(view, episodes, slots, compute) == first and len(compute.asked) == asked
    later = view.take([1])  # episode 0 left the view: what was known of it is forgotten
    memo.rows(later, *np.nonzero(later.occupied), compute)
    assert all(key[0] == view.episode[1] for key in memo._values)


@pytest.mark.parametrize("make", [LARA, lambda: HOP(WLSPredictor())], ids=["lara", "hop_wls"])
def test_a_view_of_no_episodes_gets_no_actions(make):
    core = coreenv.BatchedCore(coreenv.EnvConfig(arrival_horizon=30), 2)
    core.reset([1, 2])
    empty = core.view().take(np.zeros(2, bool))
    assert make().act_view(empty).shape == (0, core.config.num_nodes)


class ActOnly(FIFO):
    """A user's FIFO that changes only ``act``: it plays by that, one episode at a time."""

    def act(self, observations, infos):
        return dict.fromkeys(observations, self.env.config.num_slots)


def test_a_subclass_that_overrides_only_act_plays_by_its_act():
    assert acts_in_batches(FIFO()) and not acts_in_batches(ActOnly())
    rows = run_episodes(ActOnly(), [(coreenv.EnvConfig(arrival_horizon=80), 1)])
    assert rows[0]["completion_rate"] == 0.0  # it idles: its act, not FIFO's view, played


class ReadsCluster(FIFO):
    """FIFO declaring a policy that reads the cluster's columns."""

    observation_cluster = True

    def act_view(self, view):
        self.widths = getattr(self, "widths", set()) | {view.obs.shape[-1]}
        return super().act_view(view)


def test_a_scheduler_reading_the_cluster_is_shown_equal_nodes_as_speeds_of_one_same_episodes():
    equal = coreenv.make_config(None, task_set="id", arrival_horizon=200)
    shown = equal.replace(node_speeds="uniform")
    assert not equal.cluster_shown and shown.cluster_shown
    reader = ReadsCluster()
    rows = run_episodes(reader, [(equal, 7), (equal, 8)])
    env = coreenv.CoreEnv(shown)
    env.reset(seed=7)
    assert reader.widths == {env.view().obs.shape[-1]}
    assert rows == run_episodes(FIFO(), [(shown, 7), (shown, 8)])  # same episodes, same rows
