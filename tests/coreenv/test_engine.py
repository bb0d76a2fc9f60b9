"""The compiled step rules (`coreenv.core.engine`): node claims, and one source that gives the
same episodes compiled and run as plain Python (``NUMBA_DISABLE_JIT=1``)."""

import json
import os
import subprocess
import sys

import numpy as np

import coreenv
from coreenv.core.engine import claims

K = 3


def _mask(occupied: list[int]) -> np.ndarray:
    """One lane's (1, K + 2) mask: the occupied slots, idle always allowed, out of range never."""
    mask = np.zeros((1, K + 2), np.int8)
    mask[0, occupied] = 1
    mask[0, K] = 1
    return mask


def test_the_first_node_to_choose_an_occupied_slot_takes_it_and_the_later_ones_idle():
    chosen = np.array([[1, 1, 0, 1]])
    assert claims(chosen, _mask([0, 1])).tolist() == [[True, False, True, False]]


def test_idle_empty_and_out_of_range_choices_take_nothing():
    chosen = np.array([[K, 2, K + 1, 0]])  # idle, an empty slot, out of range, an occupied one
    assert claims(chosen, _mask([0])).tolist() == [[False, False, False, True]]


def test_lanes_claim_independently():
    chosen = np.array([[0, 0], [0, 0]])
    masks = np.vstack([_mask([0]), _mask([1])])
    assert claims(chosen, masks).tolist() == [[True, False], [False, False]]


def _recorded(steps: int) -> dict:
    env = coreenv.CoreVectorEnv(8, view="nodes", shaping_beta=1.0, admission="edf")
    return coreenv.fingerprint_vector(env, seed=21, steps=steps).as_dict()


def test_compiled_and_plain_python_runs_give_the_same_episodes_bit_for_bit():
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "import test_engine; print(json.dumps(test_engine._recorded(400)))"
    )
    folder = os.path.dirname(__file__)
    plain = subprocess.run(
        [sys.executable, "-c", script, folder],
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(plain.stdout) == _recorded(400)
