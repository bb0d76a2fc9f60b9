"""The lab's predictors by name: the shipped ones, and the studies' raw networks and analogs."""

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv_lab.predictors import LAB_PREDICTORS, MARA_TEACHER, make_predictor  # noqa: E402
from mara_agents.predictors import PREDICTORS  # noqa: E402
from mara_agents.predictors.flow import FMPredictor  # noqa: E402


def test_the_teacher_is_read_raw_from_its_own_checkpoint():
    teacher = make_predictor("fm_mara_teacher")
    reference = FMPredictor.pretrained(MARA_TEACHER, calibrated=False)
    prefix = 2.0 * (1.0 + np.arange(60.0)) ** -0.4
    assert teacher.calibration is None
    np.testing.assert_array_equal(teacher.futures([prefix]), reference.futures([prefix]))


def test_the_lab_knows_the_shipped_names_and_its_own_and_refuses_others():
    assert not set(LAB_PREDICTORS) & set(PREDICTORS)
    assert make_predictor("fm_uncalibrated").calibration is None
    with pytest.raises(ValueError, match="unknown predictor 'fm_raw'"):
        make_predictor("fm_raw")
