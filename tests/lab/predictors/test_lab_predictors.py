"""`coreenv_lab.predictors`: every product predictor and the lab's by name, and a lab predictor
made one that MARA's checkpoints and training may name."""

import pytest

from coreenv import reads_context
from coreenv_lab.predictors import (
    LAB_PREDICTORS,
    MARA_TEACHER,
    WEIGHER,
    make_predictor,
    make_readable,
)
from mara_agents.predictors import POLICY_PREDICTORS, PREDICTORS, WLSPredictor


def test_the_lab_names_are_not_the_package_s_and_its_checkpoints_are_there():
    assert set(LAB_PREDICTORS) == {
        "fm_uncalibrated",
        "fm_mara_teacher",
        "fm_analog",
        "fm_mara_analog",
        "fm_mara_learned",
    }
    assert not set(LAB_PREDICTORS) & set(POLICY_PREDICTORS)
    assert MARA_TEACHER.is_file() and WEIGHER.is_file()


def test_make_predictor_knows_the_product_s_names_and_refuses_others():
    assert isinstance(make_predictor("wls"), WLSPredictor)
    with pytest.raises(ValueError, match=r"unknown predictor 'truth'; valid names: \[.*'fm_an"):
        make_predictor("truth")
    with pytest.raises(ValueError, match="'wls' has no sampler settings"):
        make_predictor("wls", samples=8)


@pytest.mark.parametrize("name", sorted(LAB_PREDICTORS))
def test_each_lab_predictor_builds_and_the_analog_ones_read_the_context(name):
    pytest.importorskip("torch")
    predictor = make_predictor(name, samples=4)
    assert reads_context(predictor) == ("analog" in name or "learned" in name)


def test_make_readable_adds_a_lab_predictor_to_what_a_checkpoint_may_name():
    import mara_agents.predictors as package

    before = dict(POLICY_PREDICTORS)
    try:
        make_readable("fm_analog")
        assert POLICY_PREDICTORS["fm_analog"] is LAB_PREDICTORS["fm_analog"]
        make_readable("mine", WLSPredictor)
        assert isinstance(package.make_predictor("mine"), WLSPredictor)
        make_readable("wls", lambda: None)  # a name it holds is left as it is
        assert POLICY_PREDICTORS["wls"] is before["wls"] and "mine" not in PREDICTORS
        with pytest.raises(ValueError, match="unknown lab predictor 'nope'"):
            make_readable("nope")
    finally:
        POLICY_PREDICTORS.clear()
        POLICY_PREDICTORS.update(before)
