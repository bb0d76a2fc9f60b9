"""Compatibility (`coreenv.compat`) for what 0.1.0 released: slot_table() and oracle_view() are
deprecated and still give the same data as the view; names that no release had are gone."""

import importlib

import numpy as np
import pytest

import coreenv
from coreenv import CoreEnv, EnvConfig, Estimate, NoPredictorError, layout
from coreenv import compat
from helpers import SMALL_CURVES, first_crossing

CONFIG = EnvConfig(
    task_set=SMALL_CURVES, arrival_prob=0.3, arrival_horizon=40, num_nodes=3, num_slots=3
)
LIVE = ("occupied", "uid", "arrival", "deadline", "initial_loss", "target")


class Halving:
    """A predictor: half the batches trained so far remain, with P(success) 0.5."""

    def estimate(self, prefix, target, budget):
        return Estimate(len(prefix) / 2, 0.5)


def played(steps, predictor=None):
    env = CoreEnv(CONFIG, predictor=predictor)
    env.reset(seed=3)
    for _ in range(steps):
        occupied = np.flatnonzero(env.view().occupied[0])[: CONFIG.num_nodes].tolist()
        env.step(dict(zip(env.agents, occupied)))
    return env


def slot_table(env):
    with pytest.warns(DeprecationWarning, match=r"slot_table\(\).*0\.4\.0.*view\(\)") as caught:
        table = env.slot_table()
    assert caught[0].filename == __file__  # the warning points at the caller
    return table


def test_slot_table_warns_and_shows_what_the_view_shows():
    env = played(12, Halving())
    table, view = slot_table(env), env.view()
    for name in ("occupied", "uid", "arrival", "deadline", "target", "batches"):
        np.testing.assert_array_equal(getattr(table, name), getattr(view, name)[0], err_msg=name)
    assert table.t == view.t[0] and table.version == env.slot_version
    np.testing.assert_array_equal(table.est_remaining, view.est_remaining[0])
    np.testing.assert_array_equal(table.est_p_success, view.est_p_success[0])
    assert (table.est_p_success[view.occupied[0] & (view.batches[0] > 0)] == 0.5).any()
    for slot in np.flatnonzero(view.occupied[0]):
        np.testing.assert_array_equal(table.prefix(slot), view.prefix(0, slot))
        assert table.loss[slot] == view.prefix(0, slot)[-1]
        assert table.initial_loss[slot] == view.prefix(0, slot)[0]


def test_slot_table_estimates_say_when_there_is_no_predictor():
    table = slot_table(played(5))
    with pytest.raises(NoPredictorError, match="no predictor attached"):
        _ = table.est_remaining
    with pytest.raises(NoPredictorError, match="observation_predictor"):
        _ = table.est_p_success


def test_slot_table_arrays_follow_the_env_and_cannot_be_written():
    env = played(0)
    table = slot_table(env)
    held = {name: getattr(table, name) for name in LIVE}
    before = {name: array.copy() for name, array in held.items()}
    for array in held.values():
        with pytest.raises(ValueError, match="read-only"):
            array[0] = array[0]
    for _ in range(20):
        env.step({})
    view = env.view()
    for name, array in held.items():
        assert not np.array_equal(array, before[name]), name  # tasks arrived: it followed
    np.testing.assert_array_equal(held["occupied"], view.occupied[0])
    np.testing.assert_array_equal(held["deadline"], view.deadline[0])


def test_oracle_view_warns_and_tells_the_truth_of_slots_and_queue():
    env = played(12)
    with pytest.warns(DeprecationWarning, match=r"view\(clairvoyant=True\)"):
        truth = env.oracle_view()
    view = env.view(clairvoyant=True)
    assert truth.t == view.t[0]
    for slot, task in enumerate(truth.slots):
        assert (task is None) == (not view.occupied[0, slot])
        if task is not None:
            assert task.uid == view.uid[0, slot] and task.remaining == view.remaining[0, slot]
            assert (task.arrival, task.deadline) == (view.arrival[0, slot], view.deadline[0, slot])
            assert task.target == view.target[0, slot]
            np.testing.assert_array_equal(task.curve, view.curves[0][task.uid])
    assert len(truth.waiting) == view.waiting[0] > 0
    for task in truth.waiting:
        assert task.demand == task.remaining == first_crossing(task.curve, task.target)
        assert task.arrival <= view.t[0] < task.deadline


# -- names of the unreleased 0.2.0 are gone -------------------------------------------------------


@pytest.mark.parametrize("old", ["coreenv.gym_env", "coreenv.core.batched", "coreenv.sequential_env"])
def test_a_module_path_no_release_had_does_not_import(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_the_layout_helpers_live_in_coreenv_layout_only():
    assert "slot_width" in layout.__all__
    with pytest.raises(AttributeError, match="no attribute 'slot_width'"):
        _ = coreenv.slot_width


def test_compat_keeps_only_the_names_of_0_1_0_and_the_paths_its_pickles_name():
    assert sorted(compat.__all__) == [
        "Counters",
        "OracleView",
        "PICKLED_PATHS",
        "SlotTable",
        "State",
        "TaskTruth",
        "install",
    ]
    assert importlib.import_module("coreenv.core.env").CoreEnv is coreenv.CoreEnv
    assert importlib.import_module("coreenv.core.state").State is compat.State
