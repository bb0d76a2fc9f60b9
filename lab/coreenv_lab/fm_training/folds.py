"""Held-out folds: does a predictor transfer to a family, or a kind of training, it never saw?

Two ways to fold (design: docs/predictors.md):

- **leave one family out** (`lofo_folds`): fold ``f`` trains a flow-matching predictor on the
  training runs (``id_train``) of every ID family but ``f`` and is judged on the test runs
  (``id``) of ``f``;
- **leave one kind out** (`loko_folds`): fold ``k`` trains on every kind of the curve corpus
  but ``k`` (and without the bundled ID runs when ``k`` is their kind) and is judged on the
  corpus's test runs of kind ``k``.

A fold's *calibration runs* are the training runs of what it holds out: the predictions of its
model on them are how the predictor errs on something new, and cross-fit the `Calibration`
(`cross_fitted_calibrations`). Fold models are written under a work folder (``results/``), never
into the package; a fold that has a finished model is loaded, an interrupted one resumes.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from coreenv.curves import CurveBank, named_task_set
from mara_agents.fm_training.calibration_fit import (
    READINGS,
    OutOfFamily,
    family_ratios,
    fit_calibration,
)
from mara_agents.fm_training.corpus import corpus_kinds, corpus_rows, load_corpus
from mara_agents.fm_training.training import FMTrainConfig, train_fm
from mara_agents.predictor_eval.queries import (
    PredictorScore,
    QueryConfig,
    make_queries,
    score_predictor,
)
from mara_agents.predictors.calibration import RAW, Calibration
from mara_agents.predictors.flow import FMPredictor
from mara_agents.predictors.flow_model import task_features
from mara_agents.predictors.wls import WLSPredictor

__all__ = [
    "Fold",
    "FoldScore",
    "cross_fitted_calibrations",
    "fold_predictor",
    "lofo_folds",
    "loko_folds",
    "score_fold",
    "score_folds",
    "train_calibrated",
]

CALIBRATION_SET = "id_train"
"""The split whose runs of a fold's held-out family fit the calibration (never test runs)."""
CALIBRATION_QUERIES = (
    QueryConfig(per_curve=16, seed=1),
    QueryConfig(per_curve=16, seed=1, targets="user"),
)
"""Queries for fitting calibrations: both protocols, more per run than for scoring, and other
draws than the scored ones."""

TEST_SET = "id"
"""The split whose runs of the held-out family are the fold's test runs."""


@dataclass(frozen=True)
class Fold:
    """One fold: what it holds out, how its predictor is trained, and the runs it meets."""

    name: str
    """The family or kind held out."""
    train: FMTrainConfig
    test: CurveBank
    """The held-out family's or kind's test runs: what the fold is judged on."""
    calibration: CurveBank
    """The held-out family's or kind's training runs: where its calibration pairs come from."""


@dataclass(frozen=True)
class FoldScore:
    """The fold's FM and WLS on the same queries of the held-out family's or kind's test runs."""

    name: str
    fm: PredictorScore
    wls: PredictorScore

    @property
    def mae_ratio(self) -> float:
        """FM's capped MAE over WLS's (the target: at most 0.7)."""
        return self.fm.capped_mae / self.wls.capped_mae


def lofo_folds(recipe: FMTrainConfig | None = None) -> list[Fold]:
    """One fold per family of ``recipe.task_set``, each with ``recipe`` minus that family.

    ``recipe`` defaults to `FMTrainConfig`'s (recipe ``id_only``, the teacher network's). A
    recipe with a corpus is refused: the corpus holds runs of the same models and datasets
    (``cnn-digits`` among them), so the held-out family would not be held out; fold such a
    recipe by kind.
    """
    recipe = recipe or FMTrainConfig()
    if recipe.corpus is not None:
        raise ValueError(
            "lofo_folds needs a recipe without a corpus (its runs share models and datasets with "
            f"the ID families), got corpus={recipe.corpus!r}; use loko_folds for it."
        )
    train = named_task_set(CALIBRATION_SET)
    families = named_task_set(recipe.task_set).families
    test = named_task_set(TEST_SET)
    return [
        Fold(
            family,
            dataclasses.replace(recipe, exclude_families=(*recipe.exclude_families, family)),
            test.subset(test.family == family, name=f"{TEST_SET}:{family}"),
            train.subset(train.family == family, name=f"{CALIBRATION_SET}:{family}"),
        )
        for family in families
    ]


def loko_folds(recipe: FMTrainConfig) -> list[Fold]:
    """One fold per kind of ``recipe.corpus``, each with ``recipe`` minus that kind.

    A fold is judged on the corpus's ``test`` runs of its kind (the curves ``recipe`` trains on)
    and calibrated on its ``train`` runs.
    """
    if recipe.corpus is None:
        raise ValueError("loko_folds needs a recipe with a corpus (FMTrainConfig.corpus).")
    corpus = corpus_rows(load_corpus(recipe.corpus), curves=recipe.corpus_curves)
    kinds = corpus_kinds(corpus)
    return [
        Fold(
            kind,
            dataclasses.replace(recipe, exclude_kinds=(*recipe.exclude_kinds, kind)),
            corpus_rows(corpus, kinds=[kind], split="test"),
            corpus_rows(corpus, kinds=[kind], split="train"),
        )
        for kind in kinds
    ]


def fold_predictor(fold: Fold, work: Path, log: Callable[[str], None] = print) -> FMPredictor:
    """The fold's trained predictor: loaded from ``work/<name>/fm.pt`` or trained there first.

    The fold's recipe is kept beside the model (``recipe.json``); a folder trained with another
    recipe is refused rather than silently reused.
    """
    folder = Path(work) / fold.name
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
        log(f"fold {fold.name}: training without it")
        train_fm(fold.train, folder, log).predictor.save(model)
    return FMPredictor.pretrained(model)


def score_fold(
    fold: Fold,
    work: Path,
    queries: QueryConfig | None = None,
    calibration: Calibration | None = None,
    log: Callable[[str], None] = print,
) -> FoldScore:
    """Train (or load) the fold's predictor and score it and WLS on what it held out.

    ``calibration`` maps the fold model's success share; it must not have been fitted on the
    held-out family or kind (`cross_fitted_calibrations` gives such maps).
    """
    asked = make_queries(fold.test, queries or QueryConfig())
    fm = fold_predictor(fold, work, log)
    fm.calibration = calibration
    wls = score_predictor(WLSPredictor(), asked)
    return FoldScore(fold.name, score_predictor(fm, asked), wls)


def score_folds(
    folds: list[Fold],
    work: Path,
    queries: QueryConfig | None = None,
    calibrations: dict[str | None, Calibration] | None = None,
    only: list[str] | None = None,
    log: Callable[[str], None] = print,
) -> dict[tuple[str, str], PredictorScore]:
    """`score_fold` of each fold (of those named in ``only``, if given), as report rows.

    Keys are (``"fold <name>"``, ``"wls"`` or ``"fm"``), in fold order; each fold's model is read
    through ``calibrations[<name>]`` (`cross_fitted_calibrations`), raw when it has none.
    """
    calibrations = calibrations or {}
    results = {}
    for fold in folds:
        if only is None or fold.name in only:
            scored = score_fold(fold, work, queries, calibrations.get(fold.name), log)
            results[(f"fold {fold.name}", "wls")] = scored.wls
            results[(f"fold {fold.name}", "fm")] = scored.fm
    return results


def cross_fitted_calibrations(
    folds: list[Fold],
    work: Path,
    queries: tuple[QueryConfig, ...] = CALIBRATION_QUERIES,
    log: Callable[[str], None] = print,
    reach_edges: tuple[float, ...] = (),
) -> dict[str | None, Calibration]:
    """Calibrations fitted on predictions for what each fold held out, by fold left out of the fit.

    Key ``None``: fitted on every fold's pairs (the shipped predictor's); key ``f``: on every
    fold's but ``f``'s, to judge fold ``f`` without its own family or kind. A fold contributes its
    model's sampled crossings on ``queries`` of its calibration runs, labelled with its name (the
    blend is chosen for the worst of them); with ``reach_edges`` (`fit_calibration`'s far-target
    blends), with its name and each query's protocol, so that no protocol's worst kind is
    traded for another's.
    """
    parts = []
    for fold in folds:
        fm = fold_predictor(fold, work, log)
        for config in queries:
            asked = make_queries(fold.calibration, config)
            wls, _ = WLSPredictor().estimate_batch(asked.prefixes, asked.targets, asked.budgets)
            parts.append(
                (
                    fold.name,
                    OutOfFamily(
                        np.full(
                            len(asked),
                            f"{fold.name}/{config.targets}" if reach_edges else fold.name,
                        ),
                        fm.sampled_crossings(asked.prefixes, asked.targets, RAW),
                        wls,
                        asked.budgets,
                        asked.remaining,
                        np.stack(
                            [
                                fm.sampled_crossings(asked.prefixes, asked.targets, reading)
                                for reading in READINGS
                            ],
                            axis=1,
                        ),
                        task_features(asked.prefixes, asked.targets),
                    ),
                )
            )

    def pooled(excluded: str | None) -> OutOfFamily:
        kept = [part for name, part in parts if name != excluded]
        columns = (np.concatenate([getattr(p, f.name) for p in kept]) for f in fields(OutOfFamily))
        return OutOfFamily(*columns)

    calibrations = {None: fit_calibration(pooled(None), reach_edges=reach_edges)}
    ratios = family_ratios(pooled(None), calibrations[None])
    log(
        "out-of-fold MAE / WLS's on the calibration runs, every fold: "
        + ", ".join(f"{name} {ratio:.2f}" for name, ratio in ratios.items())
    )
    return {
        **calibrations,
        **{
            fold.name: fit_calibration(pooled(fold.name), reach_edges=reach_edges) for fold in folds
        },
    }


def train_calibrated(
    recipe: FMTrainConfig,
    work: Path,
    folds: list[Fold],
    log: Callable[[str], None] = print,
    reach_edges: tuple[float, ...] = (),
) -> FMPredictor:
    """The shipped predictor's training: fold models, their calibration, the model of all data.

    Fold models go to ``work/<name>``, the calibration is cross-fitted on them (with far-target
    blends at ``reach_edges``, if any), and the model trained on everything ``recipe`` names
    (``work/all``) is returned wearing it.
    """
    calibration = cross_fitted_calibrations(folds, work, log=log, reach_edges=reach_edges)[None]
    log(
        f"calibrated on the folds: point estimate at the {calibration.level:.2f} quantile, "
        f"WLS weight {calibration.wls_weight:.2f}, farther (reach, level, weight) "
        f"{calibration.farther}, denoised {calibration.denoise}, "
        f"revealed-progress strength {calibration.backtest}"
    )
    predictor = train_fm(recipe, Path(work) / "all", log).predictor
    predictor.calibration = calibration
    return predictor
