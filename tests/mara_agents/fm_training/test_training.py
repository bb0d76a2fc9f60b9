"""FM training: examples by hand, the held-out split, and a run that resumes bit for bit."""

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coreenv.curves import bank_from_arrays  # noqa: E402
from mara_agents.fm_training.training import (  # noqa: E402
    FM_RECIPES,
    Augmentation,
    FMTrainConfig,
    examples,
    split_runs,
    train_fm,
)
from mara_agents.predictors.flow import FMPredictor  # noqa: E402
from mara_agents.predictors.flow_model import FMConfig, future_offsets  # noqa: E402

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


def test_best_futures_are_the_lowest_loss_reached_by_each_offset():
    curve = np.array([4.0, 3.0, 3.5, 2.0, 2.5, 2.2, 1.5, 1.8, 1.6, 1.2] + [1.0] * 25)
    config = FMConfig(horizon=20, recent=2, spread=2, hidden=16, context_dim=8, time_dim=8)
    made = examples(bank_from_arrays([curve]), config, min_prefix=2, futures_kind="best")
    offsets = future_offsets(config.horizon)
    n = 2  # the first example: prefix 4.0, 3.0, 3.5
    best = np.minimum.accumulate(curve[n + 1 : n + 1 + config.horizon])[offsets - 1]
    np.testing.assert_allclose(made.futures[0], np.log(best / curve[n]), rtol=1e-6)
    assert np.all(np.diff(made.futures, axis=1) <= 0)  # never rises
    loss = examples(bank_from_arrays([curve]), config, min_prefix=2)
    assert np.all(made.futures <= loss.futures + 1e-7) and np.any(made.futures < loss.futures)


def test_a_neutral_copy_is_the_run_itself_and_depth_scales_the_fall():
    log_losses = np.log(2.0 * (1.0 + np.arange(101.0)) ** -0.5)
    rng = np.random.default_rng(0)
    (same,) = Augmentation(1, (1.0, 1.0), (1.0, 1.0), (0.0, 0.0)).copies_of(log_losses, rng)
    np.testing.assert_allclose(same, log_losses)
    (deeper,) = Augmentation(1, (1.0, 1.0), (2.0, 2.0), (0.0, 0.0)).copies_of(log_losses, rng)
    np.testing.assert_allclose(deeper - deeper[0], 2.0 * (log_losses - log_losses[0]))


def test_a_faster_copy_is_the_run_sampled_at_a_higher_rate_and_ends_with_it():
    log_losses = np.log(2.0 * (1.0 + np.arange(101.0)) ** -0.5)
    rng = np.random.default_rng(0)
    (faster,) = Augmentation(1, (2.0, 2.0), (1.0, 1.0), (0.0, 0.0)).copies_of(log_losses, rng)
    assert len(faster) == 51
    np.testing.assert_allclose(faster, log_losses[::2])
    (slower,) = Augmentation(1, (0.5, 0.5), (1.0, 1.0), (0.0, 0.0)).copies_of(log_losses, rng)
    assert len(slower) == 101  # cut where the run ends
    np.testing.assert_allclose(slower[::2], log_losses[:51])
    np.testing.assert_allclose(slower[1], 0.5 * (log_losses[0] + log_losses[1]))


def test_copies_add_examples_of_their_own_and_are_seeded():
    curves = [2.0 * (1.0 + np.arange(61.0)) ** -0.5, 3.0 * (1.0 + np.arange(61.0)) ** -0.3]
    bank = bank_from_arrays(curves)
    plain = examples(bank, SMALL, min_prefix=5)
    augmented = examples(bank, SMALL, 5, Augmentation(copies=2, time_warp=(0.6, 1.0)))
    assert len(augmented) == 3 * len(plain)  # slower copies are cut to the run's length
    again = examples(bank, SMALL, 5, Augmentation(copies=2, time_warp=(0.6, 1.0)))
    np.testing.assert_array_equal(again.futures, augmented.futures)


def test_the_named_recipes_differ_only_in_what_they_train_on():
    shipped = FM_RECIPES["id_only"]
    assert shipped == FMTrainConfig() and shipped.augmentation.copies == 0
    for name, recipe in FM_RECIPES.items():
        assert recipe.steps == shipped.steps and recipe.task_set == "id_train", name
        assert recipe.model.hidden == shipped.model.hidden, name
    assert FM_RECIPES["augmented"].futures == "best"
    assert FM_RECIPES["wls_context"].model.wls_context
    assert FM_RECIPES["broad"].corpus == "bundled" and FM_RECIPES["broad"].prior_curves > 0
    assert FM_RECIPES["broad_noprior"] == dataclasses.replace(FM_RECIPES["broad"], prior_curves=0)
    assert FM_RECIPES["broad_scaled"].model.scaled_context


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
    np.testing.assert_array_equal(loaded.basis.components, straight.predictor.basis.components)
    assert loaded.basis.components.shape == (straight.predictor.net.grid, 8)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"steps": 0}, "FMTrainConfig.steps must be >= 1, got 0"),
        ({"holdout": 1}, "FMTrainConfig.holdout must be >= 2, got 1"),
        ({"lr": 0.0}, "FMTrainConfig.lr must be > 0, got 0.0"),
        ({"runs": 1}, "FMTrainConfig.runs must be None or >= 2, got 1"),
        ({"futures": "mean"}, "FMTrainConfig.futures must be one of"),
    ],
)
def test_bad_training_config_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        FMTrainConfig(**fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"copies": -1}, "Augmentation.copies must be >= 0"),
        ({"time_warp": (0.0, 2.0)}, "Augmentation.time_warp must be"),
        ({"depth": (2.0, 1.0)}, "Augmentation.depth must be"),
        ({"noise": (-0.1, 0.0)}, "Augmentation.noise must be"),
    ],
)
def test_bad_augmentation_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        Augmentation(**fields)


def test_excluding_a_family_that_is_not_there_is_refused(tmp_path):
    config = FMTrainConfig(model=SMALL, steps=1, exclude_families=("mlp-cifar",))
    with pytest.raises(ValueError, match="mlp-cifar.*not families of 'id_train'"):
        train_fm(config, tmp_path, log=lambda _: None)
