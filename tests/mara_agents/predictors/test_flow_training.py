"""FM training: examples by hand, the held-out split, and a run that resumes bit for bit."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coreenv.curves import bank_from_arrays  # noqa: E402
from mara_agents.predictors.flow import FMConfig, FMPredictor, future_offsets  # noqa: E402
from mara_agents.predictors.flow_training import (  # noqa: E402
    FMTrainConfig,
    examples,
    split_runs,
    train_fm,
)

SMALL = FMConfig(horizon=20, recent=2, spread=2, hidden=16, context_dim=8, time_dim=8)


def test_examples_are_every_prefix_whose_whole_future_is_recorded():
    curves = [2.0 * (1.0 + np.arange(41.0)) ** -0.5, 3.0 * (1.0 + np.arange(31.0)) ** -0.3]
    made = examples(bank_from_arrays(curves), SMALL, min_prefix=5)
    # n from 5 to length − 1 − H: 5..20 for 41 losses, 5..10 for 31
    assert len(made) == 16 + 6
    assert made.contexts.shape == (22, SMALL.context_size) and made.contexts.dtype == np.float32
    offsets = future_offsets(SMALL.horizon)
    n = 7  # the third example of the first curve
    expected = np.log(curves[0][n + offsets]) - np.log(curves[0][n])
    np.testing.assert_allclose(made.futures[2], expected, rtol=1e-6)


def test_one_run_in_holdout_is_held_out():
    curves = [np.linspace(2.0, 1.0, 30) * (1 + 0.01 * i) for i in range(25)]
    split = split_runs(bank_from_arrays(curves), holdout=10)
    assert (len(split.train), len(split.validation)) == (22, 3)  # rows 0, 10, 20 held out


class Interrupted(Exception):
    pass


def interrupt_after_step_8(line):
    if line.startswith("step 8/"):  # logged once step 8's checkpoint is written
        raise Interrupted


def test_an_interrupted_run_resumes_bit_for_bit(tmp_path):
    config = FMTrainConfig(model=SMALL, steps=12, batch=16, every=4, runs=12)
    straight = train_fm(config, tmp_path / "straight", log=lambda _: None)
    with pytest.raises(Interrupted):
        train_fm(config, tmp_path / "cut", log=interrupt_after_step_8)
    lines = []
    resumed = train_fm(config, tmp_path / "cut", log=lines.append)
    assert any("at step 8" in line for line in lines)
    assert resumed.history == straight.history and len(straight.history) == 3
    for a, b in zip(
        straight.predictor.net.state_dict().values(), resumed.predictor.net.state_dict().values()
    ):
        assert torch.equal(a, b)
    path = tmp_path / "fm.pt"
    resumed.predictor.save(path)
    loaded = FMPredictor.pretrained(path)
    assert loaded.net.config == SMALL
    prefix = 2.0 * (1.0 + np.arange(30.0)) ** -0.4
    np.testing.assert_array_equal(loaded.futures([prefix]), resumed.predictor.futures([prefix]))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"steps": 0}, "FMTrainConfig.steps must be >= 1, got 0"),
        ({"holdout": 1}, "FMTrainConfig.holdout must be >= 2, got 1"),
        ({"lr": 0.0}, "FMTrainConfig.lr must be > 0, got 0.0"),
        ({"runs": 1}, "FMTrainConfig.runs must be None or >= 2, got 1"),
    ],
)
def test_bad_training_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        FMTrainConfig(**fields)
