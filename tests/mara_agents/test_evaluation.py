"""evaluate(): averages design §2 metrics over seeded episodes, reproducibly."""

import math

import pytest

from coreenv.core.metrics import METRIC_KEYS
from mara_agents import evaluate
from mara_agents.schedulers import FIFO, Oracle


def test_evaluate_returns_every_metric_and_is_reproducible():
    first = evaluate(FIFO(), episodes=2, seed=5, arrival_horizon=300)
    assert set(METRIC_KEYS) <= set(first) and first["episodes"] == 2
    assert 0.0 <= first["completion_rate"] <= first["feasibility_bound"] <= 1.0
    assert 0.0 <= first["utilisation"] <= 1.0 and math.isfinite(first["steps_to_ready"])
    assert evaluate(FIFO(), episodes=2, seed=5, arrival_horizon=300) == first


def test_oracle_beats_fifo_on_the_default_regime():
    fifo = evaluate(FIFO(), episodes=4, seed=0)
    oracle = evaluate(Oracle(), episodes=4, seed=0)
    assert oracle["completion_rate"] > fifo["completion_rate"]


@pytest.mark.parametrize(("episodes", "seed"), [(0, 0), (2.5, 0), (2, -1)])
def test_bad_arguments_are_refused(episodes, seed):
    with pytest.raises(ValueError):
        evaluate(FIFO(), episodes=episodes, seed=seed)
