"""Compatibility (`coreenv.compat`): old paths and names warn and give today's objects; 0.1.0's
slot_table() and oracle_view(): deprecated, still the same data as the view."""

import importlib
import subprocess
import sys

import numpy as np
import pytest

import coreenv
from coreenv import CoreEnv, EnvConfig, Estimate, NoPredictorError, layout
from coreenv.compat import MOVED_MODULES, MOVED_NAMES
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
    with pytest.warns(DeprecationWarning, match=r"slot_table\(\).*0\.3\.0.*view\(\)") as caught:
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


# -- old paths and names ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MOVED_NAMES["coreenv"]))
def test_layout_helpers_left_the_top_level_and_still_answer_there_with_a_warning(name):
    assert name not in coreenv.__all__ and name in layout.__all__
    with pytest.warns(
        DeprecationWarning, match=rf"coreenv\.{name} .*0\.3\.0.*coreenv\.layout\.{name}"
    ):
        value = getattr(coreenv, name)
    assert value is getattr(layout, name)


def test_from_coreenv_import_a_layout_helper_warns_at_the_caller():
    with pytest.warns(DeprecationWarning, match="coreenv.layout.slot_width") as caught:
        from coreenv import slot_width
    assert slot_width is layout.slot_width and caught[0].filename == __file__


@pytest.mark.parametrize(
    ("module", "name"), [(m, n) for m, names in MOVED_NAMES.items() for n in names]
)
def test_every_moved_name_is_served_by_its_new_module(module, name):
    new, version = MOVED_NAMES[module][name]
    with pytest.warns(DeprecationWarning, match=rf"{version}: use {new}\.{name}\."):
        value = getattr(importlib.import_module(module), name)
    assert value is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_every_old_module_path_imports_and_gives_the_new_objects(old):
    modules, version = MOVED_MODULES[old]
    for new in modules:
        for name in importlib.import_module(new).__all__:
            if name in ("MOVED_MODULES", "MOVED_NAMES", "install"):
                continue  # coreenv.compat's own machinery is no old name
            with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} .*{version}"):
                value = getattr(importlib.import_module(old), name)
            assert value is getattr(importlib.import_module(new), name), f"{old}.{name}"


def test_old_module_paths_import_in_a_fresh_process():
    code = (
        "import coreenv.core.env, coreenv.gym_env\n"
        "from coreenv.sequential_env import CoreSequentialEnv, sequential_layout\n"
        "import coreenv.shells, coreenv.layout\n"
        "assert CoreSequentialEnv is coreenv.shells.CoreSequentialEnv\n"
        "assert sequential_layout is coreenv.layout.sequential_layout\n"
        "print(coreenv.core.env.CoreEnv is coreenv.CoreEnv)\n"
    )
    run = subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout == "True\n"
    assert "coreenv.sequential_env.sequential_layout is deprecated" in run.stderr


def test_a_name_that_never_existed_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = coreenv.no_such_name
    with pytest.raises(AttributeError, match="coreenv.gym_env"):
        _ = importlib.import_module("coreenv.gym_env").no_such_name
