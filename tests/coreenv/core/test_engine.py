"""The compiled step rules (`coreenv.core.engine`): node claims, and one source that gives the
same episodes compiled and run as plain Python (``NUMBA_DISABLE_JIT=1``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import coreenv
from coreenv_lab.recording import fingerprint, fingerprint_vector
from coreenv.core import engine
from coreenv.core.engine import claims

K = 3


def _mask(occupied: list[int]) -> np.ndarray:
    """One lane's (1, K + 2) mask: the occupied slots, idle always allowed, out of range never."""
    mask = np.zeros((1, K + 2), np.int8)
    mask[0, occupied] = 1
    mask[0, K] = 1
    return mask


def _claims(chosen, mask, active=None):
    """(takes, conflicts per lane) of `claims` on lanes with masks ``mask``."""
    chosen = np.array(chosen, np.int64)
    lane = np.zeros((len(chosen), engine.LANE_COLUMNS), np.int64)
    lane[:, engine.ACTIVE] = 1 if active is None else active
    takes = np.zeros(chosen.shape, bool)
    claims(chosen, mask, lane, takes)
    return takes.tolist(), lane[:, engine.STEP_CONFLICTS].tolist()


def test_the_first_node_to_choose_an_occupied_slot_takes_it_and_the_later_ones_idle():
    takes, conflicts = _claims([[1, 1, 0, 1]], _mask([0, 1]))
    assert takes == [[True, False, True, False]] and conflicts == [2]


def test_idle_empty_and_out_of_range_choices_take_nothing():
    chosen = [[K, 2, K + 1, 0]]  # idle, an empty slot, out of range, an occupied one
    takes, conflicts = _claims(chosen, _mask([0]))
    assert takes == [[False, False, False, True]] and conflicts == [2]  # idling is no conflict


def test_lanes_claim_independently_and_inactive_lanes_take_nothing():
    masks = np.vstack([_mask([0]), _mask([1]), _mask([0])])
    takes, conflicts = _claims([[0, 0], [0, 0], [0, 0]], masks, active=[1, 1, 0])
    assert takes == [[True, False], [False, False], [False, False]]
    assert conflicts == [1, 2, 0]


def _recorded(steps: int) -> list[dict]:
    """A vector env's lanes, and a CoreEnv with shaping and EDF: one lane of the engine."""
    vector = coreenv.CoreVectorEnv(8, view="nodes", shaping_beta=1.0, admission="edf")
    env = coreenv.CoreEnv(task_set="synthetic", shaping_beta=0.5, admission="edf", num_slots=4)
    return [
        fingerprint_vector(vector, seed=21, steps=steps).as_dict(),
        fingerprint(env, seeds=[5], max_steps=steps).as_dict(),
    ]


def _recorded(steps: int) -> list[dict]:
    """A vector env's lanes deciding every step, and at events (`engine.held_step`)."""
    forms = [
        coreenv.CoreVectorEnv(8, view="nodes", shaping_beta=1.0, admission="edf"),
        coreenv.CoreVectorEnv(8, view="nodes", shaping_beta=1.0, decisions="events"),
    ]
    return [fingerprint_vector(env, seed=21, steps=steps).as_dict() for env in forms]


def test_compiled_and_plain_python_runs_give_the_same_episodes_bit_for_bit():
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "import test_engine; print(json.dumps(test_engine._recorded(300)))"
    )
    folder = os.path.dirname(__file__)
    plain = subprocess.run(
        [sys.executable, "-c", script, folder],
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(plain.stdout) == _recorded(300)


def test_without_a_writable_cache_folder_the_engine_caches_in_the_temporary_directory(tmp_path):
    """A read-only install where numba finds no cache folder (numba#1771): emulated by leaving
    numba only the folder a user names, and naming none."""
    script = (
        "import numba.core.caching as caching; "
        "caching.CacheImpl._locator_classes = [caching.UserProvidedCacheLocator]; "
        "import coreenv; env = coreenv.CoreEnv(); env.reset(seed=0); env.step({}); "
        "import numba; print(numba.config.CACHE_DIR)"
    )
    environ = {
        k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")
    }
    run = subprocess.run(
        [sys.executable, "-c", script],
        env={**environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    folder = run.stdout.strip()
    assert folder.startswith(str(tmp_path)) and any(
        p.suffix == ".nbi" for p in Path(folder).rglob("*")
    )
