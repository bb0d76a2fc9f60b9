"""Sampler distillation: starts at the teacher, is seeded, saves a one-step student, refuses bad
settings."""

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coreenv.curves import bank_from_arrays  # noqa: E402
from coreenv_lab.fm_training.distill import (  # noqa: E402
    DistillConfig,
    distill_fm,
    prefix_contexts,
)
from coreenv_lab.predictors import MARA_TEACHER  # noqa: E402
from mara_agents.predictors.flow import MARA_NETWORK, FMPredictor  # noqa: E402
from mara_agents.predictors.flow_model import (  # noqa: E402
    FMConfig,
    VelocityNet,
    integrate,
    sample_futures,
)

TINY = DistillConfig(
    steps=4, batch=8, prefixes_per_run=2, runs=12, every=2, seed=3, recipe="id_only"
)
PREFIX = 2.0 * (1.0 + np.arange(60.0)) ** -0.4


@pytest.fixture(scope="module")
def teacher():
    return FMPredictor.pretrained(MARA_TEACHER)


def test_integrate_is_the_sampler_and_keeps_gradients():
    config = FMConfig(horizon=20, recent=2, spread=2, hidden=16, context_dim=8, time_dim=8)
    torch.manual_seed(0)
    net = VelocityNet(config)
    context = torch.randn((3, config.context_size))
    noise = torch.randn((3, 1, net.grid))
    sampled = sample_futures(net, context, 1, 2, "heun", noise)[:, 0]
    z = integrate(net, noise[:, 0], net.encode(context), 2, "heun")
    torch.testing.assert_close(z, sampled, rtol=0, atol=0)
    assert z.requires_grad  # a student trains through its own steps


def test_prefixes_are_drawn_as_the_environment_asks_within_each_run():
    config = FMConfig(horizon=20, recent=2, spread=2, hidden=16, context_dim=8, time_dim=8)
    curves = [2.0 * (1.0 + np.arange(200.0)) ** -0.5, 3.0 * (1.0 + np.arange(150.0)) ** -0.3]
    contexts = prefix_contexts(bank_from_arrays(curves), config, 5, min_prefix=10, seed=0)
    assert contexts.shape == (10, config.context_size) and contexts.dtype == np.float32
    again = prefix_contexts(bank_from_arrays(curves), config, 5, min_prefix=10, seed=0)
    np.testing.assert_array_equal(contexts, again)


def test_the_student_starts_at_the_teachers_weights(teacher):
    run = distill_fm(teacher, dataclasses.replace(TINY, steps=1, lr=1e-12), log=lambda _: None)
    taught = teacher.net.state_dict()
    for name, weight in run.predictor.net.state_dict().items():  # Adam moves each by ~lr
        torch.testing.assert_close(weight, taught[name], rtol=0, atol=1e-9)


def test_a_few_steps_bring_the_student_closer_to_the_teachers_samples(teacher):
    config = dataclasses.replace(TINY, steps=10, batch=64, lr=1e-3, every=10)
    first, last = distill_fm(teacher, config, log=lambda _: None).history
    assert last["validation"] < 0.5 * first["validation"]  # 0.096 -> 0.030 when written


def test_a_tiny_distillation_is_seeded(teacher):
    lines = []
    run = distill_fm(teacher, TINY, log=lines.append)
    again = distill_fm(teacher, TINY, log=lambda _: None)
    assert [entry["step"] for entry in run.history] == [0, 2, 4]
    assert run.history == again.history, "same seed, same validation losses"
    for name, weight in run.predictor.net.state_dict().items():
        torch.testing.assert_close(weight, again.predictor.net.state_dict()[name], rtol=0, atol=0)
    assert any(line.startswith("step 4/4") for line in lines)
    other = distill_fm(teacher, dataclasses.replace(TINY, seed=4), log=lambda _: None)
    assert other.history != run.history


def test_the_saved_student_samples_in_one_euler_step_with_the_teachers_calibration(
    teacher, tmp_path
):
    run = distill_fm(teacher, TINY, log=lambda _: None)
    path = tmp_path / "student.pt"
    run.predictor.save(path)
    student = FMPredictor.pretrained(path)
    assert (student.config.ode_steps, student.config.solver) == (1, "euler")
    assert student.config.samples == teacher.config.samples
    np.testing.assert_array_equal(student.calibration.knots, teacher.calibration.knots)
    np.testing.assert_array_equal(student.calibration.values, teacher.calibration.values)
    assert student.basis is None and teacher.basis is None  # fm_mara has none to keep
    np.testing.assert_array_equal(student.futures([PREFIX]), run.predictor.futures([PREFIX]))


def test_the_shipped_mara_network_is_the_teachers_one_step_student(teacher):
    shipped = FMPredictor.pretrained(MARA_NETWORK)
    assert (shipped.config.ode_steps, shipped.config.solver) == (1, "euler")
    assert (teacher.config.ode_steps, teacher.config.solver) == (4, "heun")
    np.testing.assert_array_equal(shipped.calibration.values, teacher.calibration.values)
    context = torch.from_numpy(
        prefix_contexts(bank_from_arrays([3 * PREFIX]), teacher.net.config, 8, 10, 0)
    )
    noise = torch.randn(
        (len(context), 1, teacher.net.grid), generator=torch.Generator().manual_seed(0)
    )
    taught = sample_futures(teacher.net, context, 1, 4, "heun", noise)
    learned = sample_futures(shipped.net, context, 1, 1, "euler", noise)
    untaught = sample_futures(teacher.net, context, 1, 1, "euler", noise)
    # distilled, one step lands near the teacher's four; the teacher's own single step does not
    assert ((learned - taught) ** 2).mean() < 0.1 * ((untaught - taught) ** 2).mean()


def test_a_two_step_student_records_its_steps(teacher):
    config = dataclasses.replace(TINY, student_steps=2, steps=1)
    run = distill_fm(teacher, config, log=lambda _: None)
    assert (run.predictor.config.ode_steps, run.predictor.config.solver) == (2, "euler")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"steps": 0}, "DistillConfig.steps must be >= 1, got 0"),
        ({"batch": 0}, "DistillConfig.batch must be >= 1, got 0"),
        ({"student_steps": 0}, "DistillConfig.student_steps must be >= 1, got 0"),
        ({"lr": -1e-3}, "DistillConfig.lr must be > 0, got -0.001"),
        ({"recipe": "test_runs"}, "DistillConfig.recipe must be one of"),
        ({"runs": 1}, "DistillConfig.runs must be None or >= 2, got 1"),
    ],
)
def test_bad_distillation_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        DistillConfig(**fields)
