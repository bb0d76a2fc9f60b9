"""Leave-one-family-out folds: what each fold trains on, what it is judged on, and its models."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from coreenv.curves import named_task_set  # noqa: E402
from mara_agents.predictors.flow import FMConfig  # noqa: E402
from mara_agents.predictors.flow_training import FMTrainConfig  # noqa: E402
from mara_agents.predictors.lofo import fold_predictor, lofo_folds, score_fold  # noqa: E402

SMALL = FMTrainConfig(
    model=FMConfig(hidden=16, context_dim=8, time_dim=8, layers=1), steps=3, batch=32, runs=6
)


def test_one_fold_per_id_family_judged_on_that_familys_test_runs_only():
    folds = lofo_folds()
    families = named_task_set("id_train").families
    assert [fold.family for fold in folds] == list(families) and len(folds) == 8
    for fold in folds:
        assert fold.train.exclude_families == (fold.family,)
        assert fold.train.task_set == "id_train"
        assert set(fold.test.family) == {fold.family} and set(fold.test.split) == {"id_test"}
        assert len(fold.test) == np.sum(named_task_set("id").family == fold.family)


def test_a_fold_model_is_trained_once_then_loaded(tmp_path):
    fold = lofo_folds(SMALL)[4]
    lines = []
    first = fold_predictor(fold, tmp_path, log=lines.append)
    assert (tmp_path / fold.family / "fm.pt").is_file()
    assert json.loads((tmp_path / fold.family / "recipe.json").read_text())["exclude_families"]
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
