"""Held-out folds (one family, or one kind of training, left out): what each fold trains on,
what it is judged and calibrated on, and its models."""

import dataclasses
import json

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv.curves import (  # noqa: E402
    SyntheticCurves,
    bank_from_arrays,
    named_task_set,
    save_bank,
)
from coreenv_lab.fm_training.folds import (  # noqa: E402
    cross_fitted_calibrations,
    fold_predictor,
    lofo_folds,
    loko_folds,
    score_fold,
    train_calibrated,
)
from mara_agents.fm_training.calibration_fit import BACKTESTS  # noqa: E402
from mara_agents.fm_training.training import FMTrainConfig, training_bank  # noqa: E402
from mara_agents.predictors.flow_model import FMConfig  # noqa: E402

SMALL = FMTrainConfig(
    model=FMConfig(hidden=16, context_dim=8, time_dim=8, layers=1), steps=3, batch=32, runs=6
)


def test_one_fold_per_id_family_judged_on_that_familys_test_runs_only():
    folds = lofo_folds()
    families = named_task_set("id_train").families
    assert [fold.name for fold in folds] == list(families) and len(folds) == 8
    for fold in folds:
        assert fold.train.exclude_families == (fold.name,)
        assert fold.train.task_set == "id_train"
        assert set(fold.test.family) == {fold.name} and set(fold.test.split) == {"id_test"}
        assert len(fold.test) == np.sum(named_task_set("id").family == fold.name)
        assert set(fold.calibration.family) == {fold.name}
        assert set(fold.calibration.split) == {"id_train"}


def test_a_fold_model_is_trained_once_then_loaded(tmp_path):
    fold = lofo_folds(SMALL)[4]
    lines = []
    first = fold_predictor(fold, tmp_path, log=lines.append)
    assert (tmp_path / fold.name / "fm.pt").is_file()
    assert json.loads((tmp_path / fold.name / "recipe.json").read_text())["exclude_families"]
    again = fold_predictor(fold, tmp_path, log=lines.append)
    assert sum("training without it" in line for line in lines) == 1
    prefix = 2.0 * (1.0 + np.arange(30.0)) ** -0.4
    np.testing.assert_array_equal(first.futures([prefix]), again.futures([prefix]))


def test_a_folder_trained_by_another_recipe_is_refused(tmp_path):
    fold = lofo_folds(SMALL)[0]
    fold_predictor(fold, tmp_path, log=lambda _: None)
    other = lofo_folds(FMTrainConfig(**{**SMALL.__dict__, "steps": 4}))[0]
    with pytest.raises(ValueError, match="another recipe"):
        fold_predictor(other, tmp_path, log=lambda _: None)


def test_a_fold_is_scored_against_wls_on_the_same_queries(tmp_path):
    scored = score_fold(lofo_folds(SMALL)[6], tmp_path, log=lambda _: None)
    assert scored.fm.queries == scored.wls.queries > 0
    assert scored.mae_ratio == scored.fm.capped_mae / scored.wls.capped_mae


KINDS = ("classification", "regression", "rl")


@pytest.fixture
def corpus(tmp_path):
    """A corpus-shaped bank: 2 families per kind, 3 runs each, each run's three curves."""
    rng = np.random.default_rng(0)
    source = SyntheticCurves(length=600)
    curves, families, configs = [], [], []
    for kind in KINDS:
        for family in (f"a-{kind}", f"b-{kind}"):
            for index in range(3):
                for curve in ("validation", "train", "train_ema"):
                    curves.append(source.sample(rng).losses)
                    families.append(family)
                    split = "test" if index == 0 else "train"
                    configs.append({"kind": kind, "curve": curve, "split": split})
    path = tmp_path / "corpus.npz"
    save_bank(bank_from_arrays(curves, families, configs), path)
    return str(path)


def test_one_fold_per_kind_judged_on_that_kinds_test_runs_and_calibrated_on_its_training_runs(
    corpus,
):
    folds = loko_folds(FMTrainConfig(corpus=corpus))
    assert [fold.name for fold in folds] == list(KINDS)
    for fold in folds:
        assert fold.train.exclude_kinds == (fold.name,)
        for bank, split in ((fold.test, "test"), (fold.calibration, "train")):
            configs = [json.loads(text) for text in bank.config]
            assert {c["kind"] for c in configs} == {fold.name}
            assert {c["split"] for c in configs} == {split}
        assert len(fold.test) == 6 and len(fold.calibration) == 12


def test_a_kind_fold_trains_on_every_other_kinds_training_runs_and_the_prior(corpus):
    recipe = FMTrainConfig(corpus=corpus, prior_curves=5, runs=6)
    everything = training_bank(dataclasses.replace(recipe, runs=None))
    assert len(everything) == len(named_task_set("id_train")) + 3 * 2 * 2 * 3 + 5
    fold = loko_folds(dataclasses.replace(recipe, runs=None))[1]  # regression left out
    kept = training_bank(fold.train)
    assert not any(f.endswith("regression") for f in kept.family)
    assert sum(f.startswith("prior-") for f in kept.family) == 5
    assert len(kept) == len(everything) - 12
    without_bundled = training_bank(loko_folds(dataclasses.replace(recipe, runs=None))[0].train)
    assert len(without_bundled) == 2 * 2 * 2 * 3 + 5  # classification: the bundled runs too


def test_kind_folds_need_a_corpus_and_a_missing_corpus_says_how_to_build_it(tmp_path):
    with pytest.raises(ValueError, match="corpus"):
        loko_folds(FMTrainConfig())
    with pytest.raises(ValueError, match="exclude_kinds needs a corpus"):
        FMTrainConfig(exclude_kinds=("rl",))
    with pytest.raises(FileNotFoundError, match="make_corpus.py"):
        loko_folds(FMTrainConfig(corpus=str(tmp_path / "absent.npz")))


def test_a_calibration_cross_fitted_by_kind_chooses_among_the_checks_strengths(corpus, tmp_path):
    recipe = dataclasses.replace(SMALL, corpus=corpus, runs=None)
    folds = loko_folds(recipe)
    calibrations = cross_fitted_calibrations(folds, tmp_path, log=lambda _: None)
    assert set(calibrations) == {None, *KINDS}
    for calibration in calibrations.values():
        assert calibration.backtest in (0.0, *BACKTESTS)
    shipped = train_calibrated(recipe, tmp_path, folds, log=lambda _: None)
    assert shipped.calibration is calibrations[None] or (
        shipped.calibration.backtest == calibrations[None].backtest
        and np.array_equal(shipped.calibration.values, calibrations[None].values)
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["all", *KINDS, "corpus.npz"])


def test_family_folds_refuse_a_recipe_that_trains_on_the_corpus(corpus):
    with pytest.raises(ValueError, match="use loko_folds"):
        lofo_folds(FMTrainConfig(corpus=corpus))


def test_corpus_rows_name_what_matches_nothing_and_the_bundled_corpus_has_every_kind(corpus):
    from mara_agents.fm_training.corpus import corpus_kinds, corpus_rows, load_corpus

    bank = load_corpus(corpus)
    with pytest.raises(ValueError, match="has no kind \\['poetry'\\]"):
        corpus_rows(bank, kinds=["poetry"])
    with pytest.raises(ValueError, match="no kind \\['poetry'\\] to exclude"):
        corpus_rows(bank, exclude_kinds=["poetry"])
    kept = corpus_rows(bank, curves=["validation"], split="test", exclude_kinds=["rl"])
    assert set(corpus_kinds(kept)) == {"classification", "regression"} and len(kept) == 4
    assert len(corpus_kinds(load_corpus("bundled"))) == 9
