"""`AnalogWeigher` weighs a base predictor's answer against each analog of a task's kind: it
answers as the base where no analog is found, and the shipped one trusts near analogs more as
more of them agree."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv import Description, FinishedTask, TaskContext, reads_context  # noqa: E402
from coreenv_lab.predictors import make_predictor  # noqa: E402
from coreenv_lab.predictors.analog_weigher import (  # noqa: E402
    QUERY_FEATURES,
    TOKEN_FEATURES,
    AnalogWeigher,
    WeigherConfig,
    weigher_inputs,
)
from coreenv_lab.predictors.analogs import Match  # noqa: E402
from coreenv_lab.predictors.in_context import AnalogPredictor  # noqa: E402

CURVE = 2.0 * (1.0 + np.arange(600)) ** -0.5
KIND = Description({"family": "never-seen", "optimizer": "adam"})


class Sampled:
    """Samples every task's remaining batches at the same values."""

    def __init__(self, values: list[float]) -> None:
        self.values = np.array(values, np.float64)

    def sampled_crossings(self, prefixes, targets):
        return np.tile(self.values, (len(prefixes), 1))


def test_inputs_hold_the_nearest_analogs_and_mask_the_rest():
    config = WeigherConfig(neighbours=2)
    matches = [[Match(0.1, 40.0, False), Match(0.2, math.inf, False), Match(0.3, 9.0, True)], []]
    samples = np.array([[10.0, 20.0, 30.0], [5.0, 5.0, math.inf]])
    inputs = weigher_inputs(
        samples, [CURVE[:50], CURVE[:80]], np.array([0.1, 0.1]), matches, config
    )
    assert inputs.query.shape == (2, QUERY_FEATURES)
    assert inputs.tokens.shape == (2, 2, TOKEN_FEATURES)
    assert inputs.mask.tolist() == [[True, True], [False, False]]
    assert inputs.tokens[0, 1, 4] == 1.0  # the second analog says never
    assert not inputs.tokens[1].any()
    assert inputs.base[0] == pytest.approx(math.log1p(20.0))


def test_without_an_analog_the_samples_stay_the_base_s():
    weigher = AnalogWeigher(WeigherConfig(neighbours=3))
    samples = np.array([[10.0, 20.0, 30.0]])
    weigher.reweigh(samples, [CURVE[:50]], np.array([0.1]), [[]])
    assert samples.tolist() == [[10.0, 20.0, 30.0]]


def test_an_untrained_weigher_answers_between_the_base_and_its_analogs():
    weigher = AnalogWeigher(WeigherConfig(neighbours=3))
    samples = np.array([[10.0, 20.0, 30.0]])
    weigher.reweigh(samples, [CURVE[:50]], np.array([0.1]), [[Match(0.0, 200.0, False)]])
    median = float(np.median(samples))
    assert 20.0 < median < 200.0
    assert samples[0, 0] / samples[0, 2] == pytest.approx(10.0 / 30.0)  # scaled by one factor


def test_a_saved_weigher_loads_with_the_same_answers(tmp_path):
    weigher = AnalogWeigher(WeigherConfig(neighbours=4, hidden=8), trained_for="wls")
    inputs = weigher_inputs(
        np.array([[10.0, 30.0]]),
        [CURVE[:60]],
        np.array([0.1]),
        [[Match(0.05, 90.0, False)]],
        weigher.config,
    )
    weigher.save(tmp_path / "w.pt")
    loaded = AnalogWeigher.load(tmp_path / "w.pt", base="wls")
    assert (loaded.config, loaded.trained_for) == (weigher.config, "wls")
    assert loaded.answer(inputs).tolist() == weigher.answer(inputs).tolist()
    with pytest.raises(ValueError, match="trained for predictor 'wls', not 'fm'"):
        AnalogWeigher.load(tmp_path / "w.pt", base="fm")


def finished(scale: float) -> FinishedTask:
    """A finished task of KIND: CURVE scaled, trained until it crossed batch 400's loss."""
    return FinishedTask(KIND, scale * CURVE[:401], float(scale * CURVE[400]), True, 0, 500, 400)


def test_the_shipped_weigher_moves_further_towards_analogs_that_agree():
    predictor = make_predictor("fm_mara_learned")
    assert reads_context(predictor) and isinstance(predictor, AnalogPredictor)
    prefix, target = CURVE[:101], np.array([float(CURVE[400])])

    def answer(history: tuple[FinishedTask, ...]) -> float:
        remaining, _ = predictor.estimate_batch(
            [prefix], target, np.array([500]), [TaskContext(KIND, history)]
        )
        return float(remaining[0])

    alone = answer(())
    one = answer((finished(1.0),))
    eight = answer(tuple(finished(1.0) for _ in range(8)))
    truth = 300.0  # the analogs are the task's own curve: it crosses 300 batches on
    assert abs(one - truth) < abs(alone - truth)
    assert abs(eight - truth) <= abs(one - truth)
