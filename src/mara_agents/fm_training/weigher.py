"""Training `AnalogWeigher` on kinds its base predictor never saw.

Examples are the environment protocol's queries (`make_queries`) on the curve corpus's runs,
less every kind a task set plays (`excluded_families`: the runs of the named task sets' families
and the corpus's RL kind, whose families the RL OOD set shares), so that the base predictor,
trained on ``id_train``, errs there as it errs on a kind it never saw. Each query is asked in
every situation the environment holds: ``k`` tasks of its family finished (`draw_histories`,
as the history protocol draws them), with or without the other runs of its family as recorded
reference runs (the ID tasks have the ``id_train`` runs; unseen kinds have none). The loss is the
mean absolute error of log(1 + remaining batches), capped at the horizon (a median regression).
Whole families are held out to stop the training (`WeigherTrainConfig.validation_share`), and
the report compares the weigher with the base alone and with the fixed rule on them.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from coreenv import Predictor
from coreenv.curves import CurveBank, named_task_set
from coreenv.curves.bundled import NAMED_SPLITS
from mara_agents.checks import require
from mara_agents.fm_training.corpus import BUNDLED_CORPUS, corpus_rows, load_corpus
from mara_agents.predictor_eval.history import HistoryConfig, draw_histories
from mara_agents.predictor_eval.queries import QueryConfig, make_queries
from mara_agents.predictors import make_predictor
from mara_agents.predictors.analog_weigher import (
    AnalogWeigher,
    WeigherConfig,
    WeigherInputs,
    weigher_inputs,
)
from mara_agents.predictors.analogs import answer, blend, futures
from mara_agents.predictors.in_context import IN_CONTEXT, AnalogPredictor

__all__ = [
    "WeigherExamples",
    "WeigherRun",
    "WeigherTrainConfig",
    "excluded_families",
    "train_weigher",
    "weigher_examples",
]

_flush_print = functools.partial(print, flush=True)

EXCLUDED_KINDS = ("rl",)
"""Corpus kinds left out: the RL OOD set's families (cartpole, acrobot agents) are of this kind."""


@dataclass(frozen=True)
class WeigherTrainConfig:
    """One training run of the weigher (defaults: a few minutes on one core)."""

    base: str = "fm_mara_student"
    """The predictor weighed (a name in `PREDICTORS`): the weigher is trained for it alone."""
    corpus: str = BUNDLED_CORPUS
    """The curve corpus whose runs give the examples (`load_corpus`)."""
    finished: tuple[int, ...] = (0, 1, 2, 4, 8, 16)
    """Numbers of finished tasks of the query's family in its history, one example each."""
    validation_share: float = 0.2
    """Share of the corpus's families held out to choose the epoch kept."""
    epochs: int = 100
    """Passes over the training examples; the one with the lowest validation loss is kept."""
    batch: int = 512
    lr: float = 3e-3
    seed: int = 0
    """Seeds the queries, histories, family split and network."""
    runs: int | None = None
    """Use only the first runs of the corpus (smoke tests); None: all."""
    weigher: WeigherConfig = field(default_factory=WeigherConfig)

    def __post_init__(self) -> None:
        require(self, "an int >= 1", ("epochs", "batch"))
        require(self, "an int >= 0", ("seed",))
        if not 0.0 < self.validation_share < 1.0:
            raise ValueError(
                "WeigherTrainConfig.validation_share must be in (0, 1), got "
                f"{self.validation_share!r}."
            )
        if not self.lr > 0:
            raise ValueError(f"WeigherTrainConfig.lr must be > 0, got {self.lr!r}.")
        if self.runs is not None and self.runs < 2:
            raise ValueError(f"WeigherTrainConfig.runs must be >= 2 or None, got {self.runs!r}.")
        HistoryConfig(finished=self.finished)  # checks the numbers finished


@dataclass(frozen=True)
class WeigherExamples:
    """Examples for the weigher, with what the base and the rule answer on each."""

    inputs: WeigherInputs
    truth: np.ndarray
    """(N,) float64 remaining batches R* − n."""
    rule: np.ndarray
    """(N,) remaining batches by the fixed rule (`analogs.blend` of `IN_CONTEXT`'s neighbours)."""
    finished: np.ndarray
    """(N,) the number of the family's tasks finished (k)."""
    reference: np.ndarray
    """(N,) bool: whether its family's other runs served as reference runs."""
    families: np.ndarray
    """(N,) the query's family."""

    def __len__(self) -> int:
        return len(self.truth)

    def subset(self, keep: np.ndarray) -> WeigherExamples:
        """The examples where ``keep``."""
        inputs = WeigherInputs(*(getattr(self.inputs, name)[keep] for name in _INPUTS))
        rest = {
            name: getattr(self, name)[keep]
            for name in ("truth", "rule", "finished", "reference", "families")
        }
        return WeigherExamples(inputs, **rest)


_INPUTS = ("base", "query", "tokens", "mask")


def excluded_families(bank: CurveBank) -> list[str]:
    """The families a named task set plays, and those of `EXCLUDED_KINDS`, that ``bank`` has."""
    played = {str(f) for name in NAMED_SPLITS for f in named_task_set(name).families}
    kinds = [json.loads(text).get("kind") for text in bank.config]
    left_out = {str(f) for f, kind in zip(bank.family, kinds) if kind in EXCLUDED_KINDS}
    return sorted((played | left_out) & {str(f) for f in bank.family})


def weigher_examples(
    bank: CurveBank, base: Predictor, config: WeigherTrainConfig
) -> WeigherExamples:
    """Every query of ``bank`` (environment protocol) in every situation of ``config``."""
    queries = make_queries(bank, QueryConfig(seed=config.seed))
    histories = draw_histories(
        bank, queries, HistoryConfig(finished=config.finished, seed=config.seed)
    )
    samples = futures(base, queries.prefixes, queries.targets)
    matching = replace(IN_CONTEXT, neighbours=config.weigher.neighbours)
    parts = []
    for reference in (False, True):
        finder = AnalogPredictor(base, bank if reference else None, matching)
        for k in config.finished:
            found = finder.matches(queries.prefixes, queries.targets, histories.contexts(k))
            inputs = weigher_inputs(
                samples, queries.prefixes, queries.targets, found, config.weigher
            )
            rule = samples.copy()
            for i, matches in enumerate(found):
                blend(rule[i], answer(matches, IN_CONTEXT.neighbours))
            parts.append(
                WeigherExamples(
                    inputs,
                    queries.remaining.astype(np.float64),
                    np.median(rule, axis=1),
                    np.full(len(queries), k),
                    np.full(len(queries), reference),
                    np.asarray(queries.families).astype(str),
                )
            )
    return _concatenate(parts)


def _concatenate(parts: list[WeigherExamples]) -> WeigherExamples:
    inputs = WeigherInputs(
        *(np.concatenate([getattr(p.inputs, name) for p in parts]) for name in _INPUTS)
    )
    rest = {
        name: np.concatenate([getattr(p, name) for p in parts])
        for name in ("truth", "rule", "finished", "reference", "families")
    }
    return WeigherExamples(inputs, **rest)


@dataclass(frozen=True)
class WeigherRun:
    """A trained weigher and its validation figures."""

    weigher: AnalogWeigher
    epoch: int
    """The epoch kept (lowest validation loss), from 1."""
    validation_families: list[str]
    report: dict[tuple[bool, int], dict[str, float]]
    """(reference, k) -> capped MAE in batches of ``"base"``, ``"rule"`` and ``"weigher"`` on
    the held-out families' examples."""


def train_weigher(
    config: WeigherTrainConfig = WeigherTrainConfig(),
    log: Callable[[str], None] = _flush_print,
) -> WeigherRun:
    """Train a weigher for ``config.base`` on the corpus (module docstring)."""
    start = time.perf_counter()
    corpus = load_corpus(config.corpus)
    bank = corpus_rows(corpus, curves=["validation"])
    keep = ~np.isin(bank.family.astype(str), excluded_families(bank))
    bank = bank.subset(np.flatnonzero(keep)[: config.runs])
    families = sorted({str(f) for f in bank.family})
    rng = np.random.default_rng(config.seed)
    held = max(1, round(config.validation_share * len(families)))
    validation = sorted(rng.permutation(families)[:held].tolist())
    base = make_predictor(config.base)
    examples = weigher_examples(bank, base, config)
    log(
        f"{len(examples)} examples from {len(bank)} runs of {len(families)} families "
        f"({len(validation)} held out: {', '.join(validation)}), "
        f"{time.perf_counter() - start:.0f} s"
    )
    held_out = np.isin(examples.families, validation)
    train, check = examples.subset(~held_out), examples.subset(held_out)
    torch.manual_seed(config.seed)
    weigher = AnalogWeigher(config.weigher)
    optimiser = torch.optim.Adam(weigher.parameters(), lr=config.lr)
    cap = config.weigher.horizon
    train_x = [torch.from_numpy(getattr(train.inputs, name)) for name in _INPUTS]
    train_y = torch.from_numpy(np.log1p(np.minimum(train.truth, cap)).astype(np.float32))
    best = (math.inf, 0, weigher.state_dict())
    for epoch in range(1, config.epochs + 1):
        weigher.train()
        for rows in torch.randperm(
            len(train), generator=torch.Generator().manual_seed(epoch)
        ).split(config.batch):
            loss = (weigher(*(x[rows] for x in train_x)) - train_y[rows]).abs().mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        weigher.eval()
        loss = _log_error(weigher, check, cap)
        if loss < best[0]:
            best = (loss, epoch, {k: v.clone() for k, v in weigher.state_dict().items()})
        if epoch % 10 == 0 or epoch == config.epochs:
            log(f"epoch {epoch}: validation log error {loss:.4f} (best {best[0]:.4f} at {best[1]})")
    weigher.load_state_dict(best[2])
    weigher.eval()
    report = _report(weigher, check, cap)
    log(f"trained in {time.perf_counter() - start:.0f} s")
    return WeigherRun(weigher, best[1], validation, report)


def _log_error(weigher: AnalogWeigher, examples: WeigherExamples, cap: int) -> float:
    """Mean |log1p answer − log1p truth|, both capped: the training loss."""
    answers = np.log1p(np.minimum(weigher.answer(examples.inputs), cap))
    return float(np.mean(np.abs(answers - np.log1p(np.minimum(examples.truth, cap)))))


def _report(
    weigher: AnalogWeigher, examples: WeigherExamples, cap: int
) -> dict[tuple[bool, int], dict[str, float]]:
    """Capped MAE in batches of the base, the rule and the weigher per situation."""
    answers = {
        "base": np.expm1(examples.inputs.base.astype(np.float64)),
        "rule": examples.rule,
        "weigher": weigher.answer(examples.inputs),
    }
    truth = np.minimum(examples.truth, cap)
    report = {}
    for reference in (False, True):
        for k in sorted(set(examples.finished.tolist())):
            rows = (examples.reference == reference) & (examples.finished == k)
            report[(reference, k)] = {
                name: float(np.mean(np.abs(np.minimum(a[rows], cap) - truth[rows])))
                for name, a in answers.items()
            }
    return report
