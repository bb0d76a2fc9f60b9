"""SchedulerView: what a scheduler may read, the hidden truth only when asked for."""

import numpy as np
import pytest

from coreenv import BatchedCore, CoreEnv, EnvConfig, NoPredictorError, SchedulerView
from coreenv.core.engine import NEVER
from helpers import SMALL_CURVES, first_crossing

CONFIG = EnvConfig(task_set=SMALL_CURVES, arrival_prob=0.3, arrival_horizon=40)


def played(env, steps, seed=3):
    """``env`` after ``steps`` steps of every node on the lowest occupied slots."""
    env.reset(seed=seed)
    for _ in range(steps):
        view = env.view()
        slots = np.flatnonzero(view.occupied[0])[: env.config.num_nodes].tolist()
        env.step(dict(zip(env.agents, slots)))
    return env


def test_a_view_shows_the_slots_and_the_truth_only_when_asked():
    env = played(CoreEnv(CONFIG), 12)
    view, truth = env.view(), env.view(clairvoyant=True)
    assert view.num_episodes == 1 and view.remaining is None
    occupied = view.occupied[0]
    assert occupied.any() and (view.uid[0][~occupied] == -1).all()
    assert (view.deadline[0][~occupied] == NEVER).all()
    for slot in np.flatnonzero(occupied):
        demand = first_crossing(truth.curves[0][truth.uid[0, slot]], truth.target[0, slot])
        assert truth.remaining[0, slot] == demand - view.batches[0, slot]
    assert (view.batches[0][occupied] > 0).any()  # some trained: remaining is not the demand
    assert (truth.remaining[0][~occupied] == 0).all()


def test_prefix_reveals_only_the_losses_trained():
    env = played(CoreEnv(CONFIG), 12)
    view = env.view()
    slot = int(np.flatnonzero(view.occupied[0])[0])
    losses = view.curves[0][view.uid[0, slot]]
    np.testing.assert_array_equal(view.prefix(0, slot), losses[: view.batches[0, slot] + 1])
    assert 0 < view.batches[0, slot] < len(losses) - 1  # some revealed, not all
    empty = np.flatnonzero(~view.occupied[0])
    if empty.size:
        with pytest.raises(ValueError, match="empty"):
            view.prefix(0, int(empty[0]))


def test_estimates_are_absent_without_a_predictor():
    view = played(CoreEnv(CONFIG), 5).view()
    assert view.estimates is None
    with pytest.raises(NoPredictorError, match="no predictor attached"):
        _ = view.est_remaining
    with pytest.raises(NoPredictorError, match="observation_predictor"):
        _ = view.est_p_success


def test_take_keeps_the_chosen_episodes():
    core = BatchedCore(CONFIG, 3)
    core.reset([5, 6, 7])
    for _ in range(10):
        core.step(np.zeros((3, CONFIG.num_nodes), np.int64))
    view = core.view()
    picked = view.take(np.array([False, True, True]))
    assert picked.num_episodes == 2 and picked.seed.tolist() == [6, 7]
    np.testing.assert_array_equal(picked.obs, view.obs[1:])
    assert picked.curves == view.curves[1:] and picked.configs == view.configs[1:]


def test_views_of_several_configs_join_and_refuse_another_layout():
    cores = [BatchedCore(CONFIG.replace(arrival_prob=p), 2) for p in (0.2, 0.4)]
    for core, seeds in zip(cores, ([1, 2], [3, 4])):
        core.reset(seeds)
        core.step(np.zeros((2, CONFIG.num_nodes), np.int64))
    views = [core.view() for core in cores]
    joined = SchedulerView.concat(views)
    assert joined.num_episodes == 4 and joined.seed.tolist() == [1, 2, 3, 4]
    assert [c.arrival_prob for c in joined.configs] == [0.2, 0.2, 0.4, 0.4]
    np.testing.assert_array_equal(joined.obs[2:], views[1].obs)
    assert joined.curves[2] is views[1].curves[0]
    other = BatchedCore(CONFIG.replace(num_slots=CONFIG.num_slots + 1), 1)
    other.reset([5])
    with pytest.raises(ValueError, match="layouts"):
        SchedulerView.concat([views[0], other.view()])


def test_every_episode_has_its_own_number():
    env = CoreEnv(CONFIG)
    env.reset(seed=1)
    first = env.view().episode[0]
    env.reset(seed=1)
    core = BatchedCore(CONFIG, 2)
    core.reset([1, 1])
    numbers = [first, env.view().episode[0], *core.view().episode]
    assert len(set(numbers)) == 4


def test_a_view_needs_a_running_episode():
    with pytest.raises(RuntimeError, match="reset"):
        CoreEnv(CONFIG).view()
    with pytest.raises(RuntimeError, match="reset"):
        BatchedCore(CONFIG, 2).view()


def test_a_reset_without_a_seed_shows_none():
    env = CoreEnv(CONFIG.replace(seed=None))
    env.reset()  # gymnasium picks a 128-bit seed: the view says there was none
    assert env.view().seed.tolist() == [-1]
    env.reset(seed=7)
    assert env.view().seed.tolist() == [7]
    env.reset()  # continues the generator: no seed of its own
    assert env.view().seed.tolist() == [-1]


def test_a_copied_episode_gets_a_number_of_its_own():
    import copy
    import pickle

    env = played(CoreEnv(CONFIG), 5)
    core = BatchedCore(CONFIG, 2)
    core.reset([1, 2])
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert clone.view().episode[0] != env.view().episode[0]
    numbers = set(core.view().episode.tolist())
    for clone in (copy.deepcopy(core), pickle.loads(pickle.dumps(core))):
        assert not numbers & set(clone.view().episode.tolist())


def test_joining_no_views_is_refused():
    with pytest.raises(ValueError, match="at least one view"):
        SchedulerView.concat([])
