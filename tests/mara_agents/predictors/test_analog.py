"""A predictor told each task's kind blends another's estimate with the nearest recorded run of
that kind, and answers as the other predictor alone where it finds no such run."""

import math

import numpy as np
import pytest

from coreenv import Estimate
from coreenv.curves import named_task_set
from mara_agents.predictors import ClairvoyantPredictor, WLSPredictor
from mara_agents.predictors.analog import AnalogConfig, KindAnalog

BANK = named_task_set("id_train")


class Constant:
    """Always the same estimate."""

    def __init__(self, remaining: float) -> None:
        self.remaining = remaining

    def estimate(self, prefix, target, budget):
        return Estimate(self.remaining, 0.25)


def queries(bank, count: int, prefix: int = 60):
    """(prefix, target) of ``count`` runs, each target first reached within 200 later batches."""
    found = []
    for row in range(len(bank)):
        losses = bank.curve(row).losses
        target = float(losses[prefix + 1 : prefix + 201].min())
        if target < losses[: prefix + 1].min():
            found.append((losses[: prefix + 1], target))
    return found[:count]


def test_a_run_in_the_reference_is_its_own_analog():
    truth = ClairvoyantPredictor(BANK)
    analog = KindAnalog(BANK, BANK, Constant(100.0))
    for prefix, target in queries(BANK, 10):
        true = truth.estimate(prefix, target, 0).remaining
        estimate = analog.estimate(prefix, target, 50)
        assert estimate.remaining == pytest.approx(math.sqrt(true * 100.0))
        assert estimate.p_success == 0.25  # the base predictor's
    assert analog.fallbacks == 0 and analog.queries == 10


def test_an_analog_answers_where_the_base_predictor_says_never():
    truth = ClairvoyantPredictor(BANK)
    analog = KindAnalog(BANK, BANK, Constant(math.inf))
    for prefix, target in queries(BANK, 5):
        true = truth.estimate(prefix, target, 0).remaining
        assert analog.estimate(prefix, target, 50).remaining == true


def test_without_a_reference_run_of_its_kind_the_base_predictor_answers_alone():
    family = BANK.families[0]
    reference = BANK.subset(np.flatnonzero(BANK.family == family))
    others = BANK.subset(np.flatnonzero(BANK.family != family))
    analog, wls = KindAnalog(reference, others, WLSPredictor()), WLSPredictor()
    asked = queries(others, 5) + [(np.array([3.0, 2.0, 1.5, 1.4]), 1.0)]  # a run of no bank
    for prefix, target in asked:
        assert analog.estimate(prefix, target, 50) == wls.estimate(prefix, target, 50)
    assert analog.fallbacks == analog.queries == 6


def test_the_kind_can_be_named_by_several_fields():
    config = AnalogConfig(kind_fields=("family", "optimizer"))
    truth = ClairvoyantPredictor(BANK)
    analog = KindAnalog(BANK, BANK, Constant(math.inf), config)
    prefix, target = queries(BANK, 1)[0]
    true = truth.estimate(prefix, target, 0).remaining
    assert analog.estimate(prefix, target, 0).remaining == true


def test_a_reference_run_without_the_kind_fields_is_refused():
    with pytest.raises(ValueError, match="no config field 'colour'.*'family'"):
        KindAnalog(BANK, BANK, WLSPredictor(), AnalogConfig(kind_fields=("colour",)))


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"kind_fields": ()}, "kind_fields must be one or more field names"),
        ({"kind_fields": ("family", "")}, "kind_fields must be one or more field names"),
        ({"windows": 0}, "windows must be an int >= 1"),
        ({"neighbours": True}, "neighbours must be an int >= 1"),
    ],
)
def test_a_bad_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        AnalogConfig(**fields)
