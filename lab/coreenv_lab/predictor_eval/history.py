"""The history protocol: how a predictor's estimates change as tasks of a query's kind finish.

A run's *kind* is the values of some fields of its `Description` (`HistoryConfig.kind_fields`,
default ``("family",)``; `coreenv.context.describe` of the run's family and config). For each
number finished ``k`` of `HistoryConfig.finished`, every query of the environment protocol
(`make_queries`: the same queries at every ``k``) is asked with a `TaskContext`: its run's
description and a history of finished tasks as the environment would hold them (`FinishedTask`):

- ``k`` tasks of the query's kind, on runs drawn without replacement from the set's OTHER runs of
  that kind (never the query's own run); all of them where the kind has fewer (the counts given
  are reported: `HistorySize`);
- as many tasks of other kinds (``k``, or every run of another kind where the set has fewer; none
  in a set of one kind), on runs drawn from the set's runs of other kinds, so that a predictor
  must pick its kind out;
- each one's target drawn as the environment draws targets (`target_at_fraction` at a fraction
  uniform in the queries' ``target_fraction``, the environment's), ``completed=True``, its losses
  the run's curve through its first crossing of that target (``L[0..R*]``);
- in a random order, on a serial timeline: the first arrives at step 0 and each next one when the
  one before ends; each trains a batch a step (``ended = arrival + R*``) and is due when it ends.

A query's history is drawn once, for the largest ``k``, and cut for the others: its history at
``k`` holds its history at every smaller ``k`` (same runs, targets and relative order), so the
figures across ``k`` differ by what was added alone. Each set is drawn by its own generator seeded
with `HistoryConfig.seed`: the same seed gives the same histories, whichever other sets are scored.

A predictor that does not read context (`reads_context`) is asked the same queries at every ``k``
without a history: its figures, equal at every ``k``, are a check of the protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from coreenv import Description, FinishedTask, Predictor, TaskContext, describe, reads_context
from coreenv.curves import CurveBank, target_at_fraction
from mara_agents.checks import check
from mara_agents.predictor_eval.queries import (
    PredictorScore,
    Queries,
    QueryConfig,
    make_queries,
    score_predictor,
)
from mara_agents.predictors.horizon import HORIZON

__all__ = [
    "HistoryConfig",
    "HistoryResults",
    "HistorySize",
    "Histories",
    "TaskSetSummary",
    "draw_histories",
    "run_kinds",
    "score_history",
]


@dataclass(frozen=True)
class HistoryConfig:
    """What the history protocol asks (see the module docstring)."""

    kind_fields: tuple[str, ...] = ("family",)
    """Description fields whose values together name a run's kind (every run must have them)."""
    finished: tuple[int, ...] = (0, 1, 2, 4, 8, 16)
    """The numbers ``k`` of finished tasks of the query's kind in its history, each scored."""
    queries: QueryConfig = QueryConfig()
    """The queries (the environment protocol only); its ``target_fraction`` also places the
    finished tasks' targets."""
    seed: int = 0
    """Seeds each set's draw of histories."""

    def __post_init__(self) -> None:
        fields = self.kind_fields
        if not fields or not all(isinstance(f, str) and f for f in fields):
            raise ValueError(
                f"HistoryConfig.kind_fields must be one or more field names, got {fields!r}."
            )
        if not self.finished:
            raise ValueError("HistoryConfig.finished must hold one or more numbers, got none.")
        for k in self.finished:
            check(k, "an int >= 0", "HistoryConfig.finished: every number finished")
        for name, values in (("kind_fields", fields), ("finished", self.finished)):
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:
                raise ValueError(f"HistoryConfig.{name} names {twice} more than once.")
        if self.queries.targets != "environment":
            raise ValueError(
                "HistoryConfig.queries must draw targets as the environment does "
                f"(targets='environment'), got targets={self.queries.targets!r}."
            )
        check(self.seed, "an int >= 0", "HistoryConfig.seed")


def _descriptions(bank: CurveBank) -> list[Description]:
    """Each run's `Description`: its family and config."""
    return [describe(str(family), str(text)) for family, text in zip(bank.family, bank.config)]


def run_kinds(bank: CurveBank, fields: Sequence[str]) -> list[tuple]:
    """Each run's kind: the values of ``fields`` in its `Description`.

    Raise ValueError naming the first field a run lacks, the run, the bank, that run's fields and
    the fields every run of the bank has.
    """
    descriptions = _descriptions(bank)
    kinds = [description.kind(fields) for description in descriptions]
    if None in kinds:
        row = kinds.index(None)
        has = descriptions[row].fields
        missing = next(name for name in fields if name not in has)
        common = set.intersection(*(set(d.fields) for d in descriptions))
        raise ValueError(
            f"kind field {missing!r}: run {row} (family {str(bank.family[row])!r}) of bank "
            f"{bank.name!r} has no such field; its fields: {sorted(has)}; fields every run of "
            f"{bank.name!r} has: {sorted(common)}."
        )
    return kinds


@dataclass(frozen=True)
class Histories:
    """Each query's finished tasks, drawn for the largest ``k``; `contexts` cuts them at any k.

    Per query ``i``, its candidate tasks in history order (arrays of one length): ``rows[i]``
    their bank rows, ``targets[i]`` and ``demands[i]`` (R*) their targets and first crossings,
    ``same[i]`` whether each is of the query's kind, ``rank[i]`` each one's place in the draw of
    its pool (same kind or other kinds): a task is in the history at ``k`` when ``rank < k``.
    """

    bank: CurveBank
    descriptions: list[Description]  # of each run of the bank
    query_rows: np.ndarray  # (Q,) the query's run
    rows: list[np.ndarray]
    targets: list[np.ndarray]
    demands: list[np.ndarray]
    same: list[np.ndarray]
    rank: list[np.ndarray]

    def __len__(self) -> int:
        return len(self.rows)

    def rows_at(self, k: int) -> list[np.ndarray]:
        """Each query's history at ``k`` as bank rows, in history order."""
        return [rows[rank < k] for rows, rank in zip(self.rows, self.rank)]

    def size(self, k: int) -> HistorySize:
        """How many tasks the histories at ``k`` hold, of the query's kind and of others."""
        same = np.array([np.sum(s & (r < k)) for s, r in zip(self.same, self.rank)])
        other = np.array([np.sum(~s & (r < k)) for s, r in zip(self.same, self.rank)])
        return HistorySize(float(same.mean()), int(same.min()), float(other.mean()))

    def contexts(self, k: int) -> list[TaskContext]:
        """Each query's `TaskContext`: its run's description and its history at ``k``."""
        return [
            TaskContext(self.descriptions[int(row)], self._history(i, k))
            for i, row in enumerate(self.query_rows)
        ]

    def _history(self, i: int, k: int) -> list[FinishedTask]:
        """Query ``i``'s finished tasks at ``k``, on a serial timeline."""
        kept = self.rank[i] < k
        demands = self.demands[i][kept]
        ends = np.cumsum(demands)  # each arrives as the one before ends
        return [
            FinishedTask(
                description=self.descriptions[row],
                losses=self.bank.curve(row).losses[: demand + 1],
                target=float(target),
                completed=True,
                arrival=int(end - demand),
                deadline=int(end),
                ended=int(end),
            )
            for row, target, demand, end in zip(
                self.rows[i][kept].tolist(), self.targets[i][kept], demands.tolist(), ends
            )
        ]


@dataclass(frozen=True)
class HistorySize:
    """How many finished tasks the histories at one ``k`` hold (means over the queries)."""

    same_kind: float
    """Mean tasks of the query's kind: ``k``, less where a kind has ``k`` or fewer runs."""
    fewest_same_kind: int
    """The fewest tasks of its kind any query's history holds."""
    other_kinds: float
    """Mean tasks of other kinds."""


def draw_histories(bank: CurveBank, queries: Queries, config: HistoryConfig) -> Histories:
    """Every query's finished tasks for the largest ``k`` of ``config`` (module docstring)."""
    names = [repr(kind) for kind in run_kinds(bank, config.kind_fields)]  # repr: lists hash
    kind = np.array([names.index(name) for name in names])  # a kind's first run names it
    runs = np.arange(len(bank))
    most = max(config.finished)
    low, high = config.queries.target_fraction
    rng = np.random.default_rng(config.seed)
    drawn: list[tuple[np.ndarray, ...]] = []
    for row in queries.rows.tolist():
        of_kind = kind == kind[row]
        same = rng.permutation(runs[of_kind & (runs != row)])[:most]
        other = rng.permutation(runs[~of_kind])[:most]
        rows = np.concatenate([same, other])
        is_same = np.arange(rows.size) < same.size
        rank = np.concatenate([np.arange(same.size), np.arange(other.size)])
        fractions = rng.uniform(low, high, size=rows.size)
        order = rng.permutation(rows.size)  # the history's order
        tasks = [
            target_at_fraction(bank.curve(r).losses, f) for r, f in zip(rows.tolist(), fractions)
        ]
        targets = np.array([target for target, _ in tasks], np.float64).reshape(-1)
        demands = np.array([demand for _, demand in tasks], np.int64).reshape(-1)
        drawn.append(tuple(part[order] for part in (rows, targets, demands, is_same, rank)))
    columns = [list(column) for column in zip(*drawn)] if drawn else [[] for _ in range(5)]
    return Histories(bank, _descriptions(bank), queries.rows, *columns)


@dataclass(frozen=True)
class TaskSetSummary:
    """A scored set: its runs, kinds and queries."""

    runs: int
    kinds: int
    queries: int


@dataclass(frozen=True)
class HistoryResults:
    """Every predictor's score per set and ``k`` (`score_history`)."""

    config: HistoryConfig
    task_sets: dict[str, TaskSetSummary]
    sizes: dict[tuple[str, int], HistorySize]
    """(set, k) -> how many finished tasks its histories hold."""
    scores: dict[tuple[str, int, str], PredictorScore]
    """(set, k, predictor name) -> its score."""
    reads_context: dict[str, bool]
    """Predictor name -> whether it reads context (else its scores are equal at every k)."""


def score_history(
    banks: Mapping[str, CurveBank],
    predictors: Mapping[str, Predictor],
    config: HistoryConfig = HistoryConfig(),
    horizon: int = HORIZON,
) -> HistoryResults:
    """Every predictor on every set's queries at every ``k`` of ``config`` (module docstring).

    ``banks``: set name -> its runs; ``predictors``: name -> predictor (one reading context gets
    each query's `TaskContext`). Every set's kinds are checked before any scoring.
    """
    if not banks or not predictors:
        raise ValueError(
            f"score_history needs one or more banks and predictors, got {len(banks)} bank(s) "
            f"and {len(predictors)} predictor(s)."
        )
    kinds = {name: run_kinds(bank, config.kind_fields) for name, bank in banks.items()}
    task_sets, sizes, scores = {}, {}, {}
    for name, bank in banks.items():
        queries = make_queries(bank, config.queries)
        if len(queries) == 0:
            raise ValueError(f"score_history: no query can be drawn on bank {name!r}.")
        task_sets[name] = TaskSetSummary(len(bank), len(set(kinds[name])), len(queries))
        histories = draw_histories(bank, queries, config)
        for k in config.finished:
            sizes[(name, k)] = histories.size(k)
            contexts = histories.contexts(k)
            for label, predictor in predictors.items():
                scores[(name, k, label)] = score_predictor(
                    predictor, queries, horizon, contexts=contexts
                )
    reads = {label: reads_context(predictor) for label, predictor in predictors.items()}
    return HistoryResults(config, task_sets, sizes, scores, reads)
