"""0.1.0's slot_table() and oracle_view(): deprecated, still the same data as the view."""

import numpy as np
import pytest

from coreenv import CoreEnv, EnvConfig, NoPredictorError
from helpers import SMALL_CURVES

CONFIG = EnvConfig(task_set=SMALL_CURVES, arrival_prob=0.3, arrival_horizon=40, num_slots=3)


def played(steps):
    env = CoreEnv(CONFIG)
    env.reset(seed=3)
    for _ in range(steps):
        occupied = np.flatnonzero(env.view().occupied[0])[: CONFIG.num_nodes].tolist()
        env.step(dict(zip(env.agents, occupied)))
    return env


def test_slot_table_warns_and_shows_what_the_view_shows():
    env = played(12)
    with pytest.warns(DeprecationWarning, match=r"slot_table\(\).*0\.3\.0.*view\(\)"):
        table = env.slot_table()
    view = env.view()
    for name in ("occupied", "uid", "arrival", "deadline", "target", "batches"):
        np.testing.assert_array_equal(getattr(table, name), getattr(view, name)[0], err_msg=name)
    assert table.t == view.t[0] and table.version == env.slot_version
    slot = int(np.flatnonzero(view.occupied[0])[0])
    np.testing.assert_array_equal(table.prefix(slot), view.prefix(0, slot))
    assert table.loss[slot] == view.prefix(0, slot)[-1]
    assert table.initial_loss[slot] == view.prefix(0, slot)[0]
    with pytest.raises(NoPredictorError):
        _ = table.est_remaining


def test_slot_table_arrays_follow_the_env_and_cannot_be_written():
    env = played(0)
    with pytest.warns(DeprecationWarning):
        table = env.slot_table()
    occupied = table.occupied
    before = occupied.copy()
    with pytest.raises(ValueError):
        occupied[0] = True
    for _ in range(20):
        env.step({})
    assert not np.array_equal(occupied, before)  # tasks arrived: the array followed
    np.testing.assert_array_equal(occupied, env.view().occupied[0])


def test_oracle_view_warns_and_tells_the_truth_of_slots_and_queue():
    env = played(12)
    with pytest.warns(DeprecationWarning, match=r"view\(clairvoyant=True\)"):
        truth = env.oracle_view()
    view = env.view(clairvoyant=True)
    for slot, task in enumerate(truth.slots):
        assert (task is None) == (not view.occupied[0, slot])
        if task is not None:
            assert task.remaining == view.remaining[0, slot]
            np.testing.assert_array_equal(task.curve, view.curves[0][task.uid])
    assert len(truth.waiting) == view.waiting[0] > 0
    assert all(task.remaining == task.demand for task in truth.waiting)
