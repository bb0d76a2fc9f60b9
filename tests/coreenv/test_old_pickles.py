"""Environments pickled by coreenv 0.2.0 load under today's module layout and continue exactly.

0.2.0 kept its classes at module paths that moved (`coreenv.compat.MOVED_MODULES`); a pickle
names those paths. Each fixture (data/README.md) is loaded and played on beside the same
environment built and played the same way today: every step must give the same.
"""

import dataclasses
import pickle
from pathlib import Path

import numpy as np
import pytest

import coreenv
from coreenv import BatchedCore, CoreGymEnv, CoreSequentialEnv, CoreVectorEnv, EnvConfig
from coreenv.curves import SyntheticCurves

DATA = Path(__file__).parent / "data"
CONFIG = EnvConfig(
    task_set=SyntheticCurves(length=30),
    seed=0,
    num_nodes=2,
    num_slots=3,
    arrival_prob=0.2,
    arrival_horizon=30,
    deadline_window=(10, 20),
)
IDLE = [[3, 3], [3, 3]]


def played(make, start, step, steps):
    """A new environment of ``make``, started by ``start`` and stepped ``steps`` times."""
    env = make()
    start(env)
    for _ in range(steps):
        step(env)
    return env


CASES = {  # fixture: (build, start, step, steps played before pickling), as data/README.md
    "core_env": (
        lambda: coreenv.parallel_env(config=CONFIG),
        lambda env: env.reset(seed=1),
        lambda env: env.step({}),
        20,
    ),
    "core_gym_env": (
        lambda: CoreGymEnv(CONFIG),
        lambda env: env.reset(seed=1),
        lambda env: env.step([3, 3]),
        20,
    ),
    "core_sequential_env": (
        lambda: CoreSequentialEnv(CONFIG, decisions="events"),
        lambda env: env.reset(seed=1),
        lambda env: env.step(3),
        10,
    ),
    "core_vector_env": (
        lambda: CoreVectorEnv(2, CONFIG),
        lambda env: env.reset(seed=1),
        lambda env: env.step(IDLE),
        20,
    ),
    "batched_core": (
        lambda: BatchedCore(CONFIG, 2),
        lambda core: core.reset([1, 2]),
        lambda core: core.step(IDLE),
        20,
    ),
}


def comparable(result):
    """A step's result as plain containers (a `BatchedStep` as its fields)."""
    if dataclasses.is_dataclass(result):
        return dataclasses.asdict(result)
    return result


def ended(result):
    """Whether a single episode's step result ends it (vector forms reset themselves)."""
    if not isinstance(result, tuple):
        return False
    flags = [all(f.values()) if isinstance(f, dict) else f for f in result[2:4]]
    return any(flag is True or isinstance(flag, np.bool_) and flag for flag in flags)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_0_2_0_pickle_loads_under_its_old_path_and_continues_exactly(name):
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        pytest.skip("the fixtures were pickled under numpy 2 (numpy._core), which numpy 1 lacks")
    build, start, step, steps = CASES[name]
    with pytest.warns(DeprecationWarning, match=r"will be removed in coreenv 0\.4\.0"):
        old = pickle.loads((DATA / f"{name}_0.2.0.pkl").read_bytes())
    today = played(build, start, step, steps)
    assert type(old) is type(today)
    for i in range(10):
        result = step(old)
        np.testing.assert_equal(comparable(result), comparable(step(today)), err_msg=f"[{i}]")
        if ended(result):
            break
    # pickled again, it names today's paths and loads without a warning
    again = pickle.dumps(old)
    assert b"coreenv.shells" in again
    pickle.loads(again)
