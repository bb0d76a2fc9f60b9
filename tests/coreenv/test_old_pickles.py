"""Environments pickled by coreenv 0.1.0, the one release, load and play as new ones.

A `CoreEnv` of 0.1.0 is made again from its config (`CoreEnv.__setstate__`); its episode state
cannot continue. The fixtures are described in data/README.md.
"""

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import coreenv

OLD_PICKLES = Path(__file__).parent / "data"  # made by coreenv 0.1.0: data/README.md


@pytest.mark.parametrize("moment", ["new", "mid", "end"])
def test_an_env_pickled_by_0_1_0_loads_and_plays_as_a_new_one(moment):
    """Pickled by coreenv 0.1.0 before a reset, mid-episode (then it asks for a reset) or after."""
    from mara_agents.schedulers import FIFO

    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        pytest.skip("the fixtures were pickled under numpy 2 (numpy._core), which numpy 1 lacks")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = pickle.loads((OLD_PICKLES / f"core_env_0.1.0_{moment}.pkl").read_bytes())
    asked = [w for w in caught if "older coreenv in the middle of an episode" in str(w.message)]
    assert len(asked) == (moment == "mid") and old.agents == []
    fresh = coreenv.parallel_env(task_set="synthetic", seed=0)
    assert old.config == fresh.config
    runs = []
    for env in (old, fresh):
        observations, infos = env.reset(seed=1)
        scheduler = FIFO()
        scheduler.reset(env)
        while env.agents:
            observations, *_, infos = env.step(scheduler.act(observations, infos))
        runs.append(env.metrics())
    np.testing.assert_equal(runs[0], runs[1])
    assert runs[0]["successes"] > 0
