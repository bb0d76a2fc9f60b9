"""Training `AnalogWeigher` on kinds its base predictor never saw.

Examples come from the curve corpus's runs, less every kind a task set plays
(`excluded_families`: the runs of the named task sets' families and the corpus's RL kind, whose
families the RL OOD set shares), so that the base predictor, trained on ``id_train``, errs there
as it errs on a kind it never saw. Two sources ask the queries (`WeigherTrainConfig.sources`):

- ``"protocol"``: the environment protocol's queries (`make_queries`), each asked with ``k``
  tasks of its family finished for every ``k`` of ``finished`` (`draw_histories`, as the history
  protocol draws them: finished tasks drawn at random);
- ``"episodes"``: what the environment itself asks in episodes of a few corpus families at a
  time (LARA on the base, ``information="history"``), a share of the queries recorded with the
  episode's history as it stood: finished tasks are the ones that ended first, the short ones
  over-represented, some dropped and known only so far.

Each is asked with and without the other runs of its family as recorded reference runs (the ID
tasks have the ``id_train`` runs; unseen kinds have none). The loss is the mean absolute error of
log(1 + remaining batches), capped at the horizon (a median regression). Whole families are held
out to keep the best epoch (`WeigherTrainConfig.validation_share`), and the report compares the
weigher with the base alone and with the fixed rule on them.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from coreenv import EnvConfig, Estimate, Predictor, TaskContext, estimate_many
from coreenv.curves import NAMED_SPLITS, CurveBank, demand_of, named_task_set
from coreenv_lab.predictor_eval.history import HistoryConfig, draw_histories
from coreenv_lab.predictors import make_predictor
from coreenv_lab.predictors.analog_weigher import (
    AnalogWeigher,
    WeigherConfig,
    WeigherInputs,
    weigher_inputs,
)
from coreenv_lab.predictors.analogs import blend_each, futures
from coreenv_lab.predictors.in_context import IN_CONTEXT, AnalogPredictor
from mara_agents.checks import require
from mara_agents.evaluation import run_episodes
from mara_agents.fm_training.corpus import BUNDLED_CORPUS, corpus_rows, load_corpus
from mara_agents.predictor_eval.queries import QueryConfig, make_queries
from mara_agents.schedulers import LARA

__all__ = [
    "WeigherExamples",
    "WeigherRun",
    "WeigherTrainConfig",
    "excluded_families",
    "fit_weigher",
    "train_weigher",
    "training_examples",
    "validation_families",
    "weigher_examples",
]

_flush_print = functools.partial(print, flush=True)

SOURCES = ("protocol", "episodes")
"""Who asks the weigher's training queries (module docstring)."""

EXCLUDED_KINDS = ("rl",)
"""Corpus kinds left out: the RL OOD set's families (cartpole, acrobot agents) are of this kind."""


@dataclass(frozen=True)
class WeigherTrainConfig:
    """One training run of the weigher (defaults: a few minutes on one core)."""

    base: str = "fm_mara_student"
    """The predictor weighed (a name of `coreenv_lab.predictors.make_predictor`): the weigher is
    trained for it alone."""
    corpus: str = BUNDLED_CORPUS
    """The curve corpus whose runs give the examples (`load_corpus`)."""
    sources: tuple[str, ...] = ("protocol", "episodes")
    """Who asks the queries, some of `SOURCES` (module docstring)."""
    finished: tuple[int, ...] = (0, 1, 2, 4, 8, 16)
    """Protocol: numbers of finished tasks of the query's family in its history, one example
    each; the report groups the episodes' queries by the same numbers."""
    group: int = 3
    """Episodes: families played together in one episode."""
    episodes: int = 4
    """Episodes: episodes per group of families."""
    recorded: float = 0.05
    """Episodes: share of the environment's queries recorded."""
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
        require(self, "an int >= 1", ("epochs", "batch", "group", "episodes"))
        if not self.sources or not set(self.sources) <= set(SOURCES):
            raise ValueError(
                f"WeigherTrainConfig.sources must be one or more of {SOURCES}, got "
                f"{self.sources!r}."
            )
        if not 0.0 < self.recorded <= 1.0:
            raise ValueError(
                f"WeigherTrainConfig.recorded must be in (0, 1], got {self.recorded!r}."
            )
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
    sources: np.ndarray
    """(N,) who asked it, one of `SOURCES`."""

    def __len__(self) -> int:
        return len(self.truth)

    def subset(self, keep: np.ndarray) -> WeigherExamples:
        """The examples where ``keep``."""
        inputs = WeigherInputs(*(getattr(self.inputs, name)[keep] for name in _INPUTS))
        rest = {name: getattr(self, name)[keep] for name in _FIELDS}
        return WeigherExamples(inputs, **rest)


_INPUTS = ("base", "query", "tokens", "mask")
_FIELDS = ("truth", "rule", "finished", "reference", "families", "sources")


def excluded_families(bank: CurveBank) -> list[str]:
    """The families a named task set plays, and those of `EXCLUDED_KINDS`, that ``bank`` has."""
    played = {str(f) for name in NAMED_SPLITS for f in named_task_set(name).families}
    kinds = [json.loads(text).get("kind") for text in bank.config]
    left_out = {str(f) for f, kind in zip(bank.family, kinds) if kind in EXCLUDED_KINDS}
    return sorted((played | left_out) & {str(f) for f in bank.family})


@dataclass(frozen=True)
class _Asked:
    """Queries of one source with their truth, each asked with one context."""

    source: str
    prefixes: list[np.ndarray]
    targets: np.ndarray
    remaining: np.ndarray
    families: np.ndarray
    contexts: list[TaskContext]
    finished: np.ndarray
    """(N,) tasks of the query's family in its history."""


def weigher_examples(
    bank: CurveBank, base: Predictor, config: WeigherTrainConfig
) -> WeigherExamples:
    """The queries of every source of ``config`` on ``bank``, with and without reference runs."""
    asked = []
    if "protocol" in config.sources:
        asked += _protocol_queries(bank, config)
    if "episodes" in config.sources:
        asked.append(_episode_queries(bank, base, config))
    matching = replace(IN_CONTEXT, neighbours=config.weigher.neighbours)
    parts = []
    for queries in asked:
        samples = futures(base, queries.prefixes, queries.targets)
        for reference in (False, True):
            finder = AnalogPredictor(base, bank if reference else None, matching)
            found = finder.matches(queries.prefixes, queries.targets, queries.contexts)
            inputs = weigher_inputs(
                samples, queries.prefixes, queries.targets, found, config.weigher
            )
            rule = samples.copy()
            blend_each(rule, found, IN_CONTEXT.neighbours)
            n = len(queries.prefixes)
            parts.append(
                WeigherExamples(
                    inputs,
                    queries.remaining.astype(np.float64),
                    np.median(rule, axis=1),
                    queries.finished,
                    np.full(n, reference),
                    queries.families,
                    np.full(n, queries.source),
                )
            )
    return _concatenate(parts)


def _protocol_queries(bank: CurveBank, config: WeigherTrainConfig) -> list[_Asked]:
    """The environment protocol's queries, asked at every ``k`` of ``config.finished``."""
    queries = make_queries(bank, QueryConfig(seed=config.seed))
    histories = draw_histories(
        bank, queries, HistoryConfig(finished=config.finished, seed=config.seed)
    )
    families = np.asarray(queries.families).astype(str)
    return [
        _Asked(
            "protocol",
            queries.prefixes,
            queries.targets,
            queries.remaining,
            families,
            histories.contexts(k),
            np.array([min(k, size) for size in _family_sizes(bank, queries.rows)]),
        )
        for k in config.finished
    ]


def _family_sizes(bank: CurveBank, rows: np.ndarray) -> list[int]:
    """The number of other runs of each row's family (at most that many can have finished)."""
    counts = {f: int(np.sum(bank.family == f)) for f in set(bank.family.tolist())}
    return [counts[bank.family[row]] - 1 for row in rows.tolist()]


class _Recorder:
    """The base predictor, recording a share of the queries the environment asks of it."""

    reads_context = True

    def __init__(self, base: Predictor, share: float, rng: np.random.Generator) -> None:
        self.base, self.share, self.rng = base, share, rng
        self.asked: list[tuple[np.ndarray, float, TaskContext]] = []

    def estimate(self, prefix: np.ndarray, target: float, budget: int) -> Estimate:
        """The base's answer (a query without context is not recorded)."""
        return self.base.estimate(prefix, target, budget)

    def estimate_batch(
        self,
        prefixes: list[np.ndarray],
        targets: np.ndarray,
        budgets: np.ndarray,
        contexts: Sequence[TaskContext],
    ) -> tuple[np.ndarray, np.ndarray]:
        """The base's answers; a share of the queries recorded with their contexts."""
        for i in np.flatnonzero(self.rng.random(len(prefixes)) < self.share).tolist():
            self.asked.append((np.array(prefixes[i], np.float64), float(targets[i]), contexts[i]))
        return estimate_many(self.base, prefixes, targets, budgets)


def _episode_queries(bank: CurveBank, base: Predictor, config: WeigherTrainConfig) -> _Asked:
    """What the environment asks in episodes of ``config.group`` families at a time."""
    rng = np.random.default_rng(config.seed)
    families = rng.permutation(sorted({str(f) for f in bank.family})).tolist()
    recorder = _Recorder(base, config.recorded, rng)
    scheduler = LARA(predictor=recorder)
    asked_in: list[CurveBank] = []
    for start in range(0, len(families), config.group):
        group = bank.subset(
            np.isin(bank.family.astype(str), families[start : start + config.group])
        )
        env = EnvConfig(task_set=group, information="history")
        before = len(recorder.asked)
        run_episodes(scheduler, [(env, config.seed + i) for i in range(config.episodes)])
        asked_in += [group] * (len(recorder.asked) - before)
    prefixes, targets, contexts = (list(column) for column in zip(*recorder.asked))
    runs = [_replayed(g, p) for g, p in zip(asked_in, prefixes)]
    remaining = np.array(
        [
            demand_of(g.curve(run).losses, t) - (len(p) - 1)
            for g, run, p, t in zip(asked_in, runs, prefixes, targets)
        ],
        np.float64,
    )
    own = [str(g.family[run]) for g, run in zip(asked_in, runs)]
    finished = [
        sum(task.description.fields.get("family") == family for task in context.history)
        for family, context in zip(own, contexts)
    ]
    return _Asked(
        "episodes",
        prefixes,
        np.array(targets),
        remaining,
        np.array(own),
        contexts,
        np.array(finished),
    )


def _replayed(group: CurveBank, prefix: np.ndarray) -> int:
    """The run of ``group`` the episode replays for a task of this prefix."""
    n = len(prefix)
    starts = group.losses[:, :n]
    rows = np.flatnonzero(np.all(starts == prefix, axis=1))
    if rows.size == 0:
        raise ValueError("a recorded prefix matches no run of its episode's bank")
    return int(rows[0])


def _concatenate(parts: list[WeigherExamples]) -> WeigherExamples:
    inputs = WeigherInputs(
        *(np.concatenate([getattr(p.inputs, name) for p in parts]) for name in _INPUTS)
    )
    rest = {name: np.concatenate([getattr(p, name) for p in parts]) for name in _FIELDS}
    return WeigherExamples(inputs, **rest)


@dataclass(frozen=True)
class WeigherRun:
    """A trained weigher and its validation figures."""

    weigher: AnalogWeigher
    epoch: int
    """The epoch kept (lowest validation loss), from 1."""
    validation_families: list[str]
    report: dict[tuple[str, bool, int], dict[str, float]]
    """(source, reference, k) -> capped MAE in batches of ``"base"``, ``"rule"`` and
    ``"weigher"`` on the held-out families' examples, and their number (``"queries"``)."""


def train_weigher(
    config: WeigherTrainConfig = WeigherTrainConfig(),
    log: Callable[[str], None] = _flush_print,
) -> WeigherRun:
    """Train a weigher for ``config.base`` on the corpus (module docstring)."""
    examples, validation = training_examples(config, log)
    return fit_weigher(examples, validation, config, log)


def validation_families(config: WeigherTrainConfig) -> tuple[CurveBank, list[str]]:
    """The corpus runs ``config`` reads, and the families held out of the fit.

    The runs: validation curves of no excluded family. The held-out families choose the epoch.
    """
    bank = corpus_rows(load_corpus(config.corpus), curves=["validation"])
    keep = ~np.isin(bank.family.astype(str), excluded_families(bank))
    bank = bank.subset(np.flatnonzero(keep)[: config.runs])
    families = sorted({str(f) for f in bank.family})
    rng = np.random.default_rng(config.seed)
    held = max(1, round(config.validation_share * len(families)))
    return bank, sorted(rng.permutation(families)[:held].tolist())


def training_examples(
    config: WeigherTrainConfig, log: Callable[[str], None] = _flush_print
) -> tuple[WeigherExamples, list[str]]:
    """The examples of ``config`` on the corpus, and the families held out for validation."""
    start = time.perf_counter()
    bank, validation = validation_families(config)
    families = sorted({str(f) for f in bank.family})
    base = make_predictor(config.base)
    examples = weigher_examples(bank, base, config)
    log(
        f"{len(examples)} examples from {len(bank)} runs of {len(families)} families "
        f"({len(validation)} held out: {', '.join(validation)}), "
        f"{time.perf_counter() - start:.0f} s"
    )
    return examples, validation


def fit_weigher(
    examples: WeigherExamples,
    validation: Sequence[str],
    config: WeigherTrainConfig,
    log: Callable[[str], None] = _flush_print,
) -> WeigherRun:
    """A weigher fitted on the examples of families not in ``validation``.

    The epoch kept is the one with the lowest loss on the examples of ``validation``.
    """
    start = time.perf_counter()
    held_out = np.isin(examples.families, validation)
    train, check = examples.subset(~held_out), examples.subset(held_out)
    torch.manual_seed(config.seed)
    weigher = AnalogWeigher(config.weigher, trained_for=config.base)
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
    report = _report(weigher, check, config)
    log(f"trained in {time.perf_counter() - start:.0f} s")
    return WeigherRun(weigher, best[1], list(validation), report)


def _log_error(weigher: AnalogWeigher, examples: WeigherExamples, cap: int) -> float:
    """Mean |log1p answer − log1p truth|, both capped: the training loss."""
    answers = np.log1p(np.minimum(weigher.answer(examples.inputs), cap))
    return float(np.mean(np.abs(answers - np.log1p(np.minimum(examples.truth, cap)))))


def _report(
    weigher: AnalogWeigher, examples: WeigherExamples, config: WeigherTrainConfig
) -> dict[tuple[str, bool, int], dict[str, float]]:
    """Capped MAE in batches of the base, the rule and the weigher per situation.

    A situation is a source, with or without reference runs, and the number of tasks of the
    query's family finished: the largest of ``config.finished`` it reaches.
    """
    cap = config.weigher.horizon
    answers = {
        "base": np.expm1(examples.inputs.base.astype(np.float64)),
        "rule": examples.rule,
        "weigher": weigher.answer(examples.inputs),
    }
    truth = np.minimum(examples.truth, cap)
    levels = np.array(sorted(config.finished))
    reached = levels[np.searchsorted(levels, examples.finished, side="right") - 1]
    report = {}
    for source in config.sources:
        for reference in (False, True):
            for k in levels.tolist():
                rows = (examples.sources == source) & (examples.reference == reference)
                rows &= reached == k
                if rows.any():
                    report[(source, reference, k)] = {
                        name: float(np.mean(np.abs(np.minimum(a[rows], cap) - truth[rows])))
                        for name, a in answers.items()
                    } | {"queries": float(rows.sum())}
    return report
