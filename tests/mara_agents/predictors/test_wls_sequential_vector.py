"""The recipe's environment: the sequential vector form with WLS estimates equals, lane by lane,
`CoreSequentialEnv` with its own WLS predictor, bit for bit."""

import pytest

from helpers import SEQUENTIAL_SHORT, play_sequential_lanes
from mara_agents.predictors import make_predictor

SHORT = {**SEQUENTIAL_SHORT, "min_prefix": 3}  # estimates from early on


@pytest.mark.parametrize("slot_order", ["table", "deadline"])
def test_lanes_with_wls_estimates_equal_sequential_envs(slot_order):
    options = {**SHORT, "decisions": "events", "slot_order": slot_order}
    ended, _ = play_sequential_lanes(3, 5, 6, 200, predictor=make_predictor("wls"), **options)
    assert ended > 0
