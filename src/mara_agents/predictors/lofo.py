"""Leave-one-family-out folds: does a predictor transfer to a family it never saw?

Fold ``f`` trains a flow-matching predictor on the training runs (``id_train``) of every ID family
but ``f`` and judges it on the test runs (``id``) of ``f`` alone. Fold models are written under a
work folder (``results/``), never into the package; a fold that has a finished model is loaded,
an interrupted one resumes.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from coreenv.curves import CurveBank, named_task_set
from mara_agents.predictors.calibration import Calibration, OutOfFamily, fit_calibration
from mara_agents.predictors.flow import FMPredictor
from mara_agents.predictors.flow_training import FMTrainConfig, train_fm
from mara_agents.predictors.queries import (
    PredictorScore,
    QueryConfig,
    make_queries,
    score_predictor,
)
from mara_agents.predictors.wls import WLSPredictor

__all__ = [
    "Fold",
    "FoldScore",
    "cross_fitted_calibrations",
    "fold_predictor",
    "lofo_folds",
    "score_fold",
    "train_calibrated",
]

CALIBRATION_SET = "id_train"
"""The split whose runs of a fold's held-out family fit the calibration (never test runs)."""
CALIBRATION_QUERIES = QueryConfig(per_curve=16, seed=1)
"""Queries for fitting calibrations: more per run than for scoring, and other draws."""

TEST_SET = "id"
"""The split whose runs of the held-out family are the fold's test runs."""


@dataclass(frozen=True)
class Fold:
    """One fold: the family held out, how its predictor is trained, and the runs it is judged on."""

    family: str
    train: FMTrainConfig
    test: CurveBank


@dataclass(frozen=True)
class FoldScore:
    """The fold's FM and WLS on the same queries of the held-out family's test runs."""

    family: str
    fm: PredictorScore
    wls: PredictorScore

    @property
    def mae_ratio(self) -> float:
        """FM's capped MAE over WLS's (the target: at most 0.7)."""
        return self.fm.capped_mae / self.wls.capped_mae


def lofo_folds(recipe: FMTrainConfig | None = None) -> list[Fold]:
    """One fold per family of ``recipe.task_set``, each with ``recipe`` minus that family.

    ``recipe`` defaults to the shipped predictor's (`FMTrainConfig`).
    """
    recipe = recipe or FMTrainConfig()
    families = named_task_set(recipe.task_set).families
    test = named_task_set(TEST_SET)
    return [
        Fold(
            family,
            dataclasses.replace(recipe, exclude_families=(*recipe.exclude_families, family)),
            test.subset(test.family == family, name=f"{TEST_SET}:{family}"),
        )
        for family in families
    ]


def fold_predictor(fold: Fold, work: Path, log: Callable[[str], None] = print) -> FMPredictor:
    """The fold's trained predictor: loaded from ``work/<family>/fm.pt`` or trained there first.

    The fold's recipe is kept beside the model (``recipe.json``); a folder trained with another
    recipe is refused rather than silently reused.
    """
    folder = Path(work) / fold.family
    recipe = json.dumps(dataclasses.asdict(fold.train), indent=1, sort_keys=True)
    written = folder / "recipe.json"
    if written.is_file() and written.read_text() != recipe:
        raise ValueError(
            f"{folder} holds a fold trained with another recipe ({written}); use another work "
            f"folder or delete it."
        )
    model = folder / "fm.pt"
    if not model.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        written.write_text(recipe)
        log(f"fold {fold.family}: training without it")
        train_fm(fold.train, folder, log).predictor.save(model)
    return FMPredictor.pretrained(model)


def score_fold(
    fold: Fold,
    work: Path,
    queries: QueryConfig | None = None,
    calibration: Calibration | None = None,
    log: Callable[[str], None] = print,
) -> FoldScore:
    """Train (or load) the fold's predictor and score it and WLS on the held-out family.

    ``calibration`` maps the fold model's success share; it must not have been fitted on the
    held-out family (`cross_fitted_calibrations` gives such maps).
    """
    asked = make_queries(fold.test, queries or QueryConfig())
    fm = fold_predictor(fold, work, log)
    fm.calibration = calibration
    wls = score_predictor(WLSPredictor(), asked)
    return FoldScore(fold.family, score_predictor(fm, asked), wls)


def cross_fitted_calibrations(
    folds: list[Fold],
    work: Path,
    queries: QueryConfig = CALIBRATION_QUERIES,
    log: Callable[[str], None] = print,
) -> dict[str | None, Calibration]:
    """Calibrations fitted on out-of-family predictions, by family left out of the fit.

    Key ``None``: fitted on every fold's pairs (the shipped predictor's); key ``f``: on every
    fold's but ``f``'s, to judge fold ``f`` without its own family. A fold contributes its
    model's sampled crossings on queries of the `CALIBRATION_SET` runs of its held-out family.
    """
    bank = named_task_set(CALIBRATION_SET)
    parts = []
    for fold in folds:
        asked = make_queries(bank.subset(bank.family == fold.family), queries)
        fm = fold_predictor(fold, work, log)
        wls, _ = WLSPredictor().estimate_batch(asked.prefixes, asked.targets, asked.budgets)
        parts.append(
            OutOfFamily(
                asked.families,
                fm.sampled_crossings(asked.prefixes, asked.targets),
                wls,
                asked.budgets,
                asked.remaining,
            )
        )

    def fitted(excluded: str | None) -> Calibration:
        kept = [part for fold, part in zip(folds, parts) if fold.family != excluded]
        columns = (np.concatenate([getattr(p, f.name) for p in kept]) for f in fields(OutOfFamily))
        return fit_calibration(OutOfFamily(*columns))

    return {None: fitted(None), **{fold.family: fitted(fold.family) for fold in folds}}


def train_calibrated(
    recipe: FMTrainConfig, work: Path, log: Callable[[str], None] = print
) -> FMPredictor:
    """The shipped predictor's training: fold models, their calibration, the model of all families.

    Fold models go to ``work/<family>``, the calibration is cross-fitted on them, and the model
    trained on every family (``work/all``) is returned wearing it.
    """
    calibration = cross_fitted_calibrations(lofo_folds(recipe), work, log=log)[None]
    log(f"calibrated on the folds: point estimate at the {calibration.level:.2f} quantile")
    predictor = train_fm(recipe, Path(work) / "all", log).predictor
    predictor.calibration = calibration
    return predictor
