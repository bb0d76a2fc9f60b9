"""Checking results: each row's episode replayed from its logged actions, its metrics compared.

A row passes when its episode digest is the one its config and seed draw, its actions play that
episode to its end, and every metric it reports is the replay's (NaN equal to NaN). A row edited
by hand, or made by a modified environment, fails with the episode and the field named.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import numpy as np

from coreenv import METRIC_KEYS, Decisions
from mara_agents.benchmark.play import job_of
from mara_agents.replay import decode_actions, episode_digest, replay
from mara_agents.sweep import env_config

__all__ = ["REQUIRED", "check_row", "problems", "sample"]

REQUIRED = ("method", "task_set", "arrival_prob", "seed", "strict", "actions", "decisions",
            "digest", *METRIC_KEYS)  # fmt: skip
"""The fields a result row must hold to be checked."""


def sample(rows: list[dict], size: int | None, seed: int = 0) -> list[int]:
    """The indices of the rows to check: all, or ``size`` drawn without replacement by ``seed``."""
    if size is None or size >= len(rows):
        return list(range(len(rows)))
    return sorted(np.random.default_rng(seed).choice(len(rows), size, replace=False).tolist())


def problems(rows: list[dict], indices: Iterable[int]) -> Iterator[str]:
    """One line per row of ``indices`` that fails (`check_row`), naming the row and the field."""
    for index in indices:
        problem = check_row(rows[index])
        if problem is not None:
            row = rows[index]
            where = (
                f"row {index + 1} ({row.get('method')}, {row.get('cluster', 'cluster ?')}, "
                f"{row.get('task_set')}, p {row.get('arrival_prob')}, seed {row.get('seed')})"
            )
            yield f"{where}: {problem}"


def check_row(row: dict) -> str | None:
    """What is wrong with one result row, or None if its replay gives what it reports."""
    missing = [name for name in REQUIRED if name not in row]
    if missing:
        return f"missing fields {missing}."
    try:
        job = job_of(row)
        config = env_config(job)
        decisions = Decisions(**row["decisions"])
        actions = decode_actions(row["actions"])
    except (TypeError, ValueError) as e:
        return f"cannot be read: {e}"
    digest = episode_digest(config, job.seed)
    if row["digest"] != digest:
        return f"digest is {row['digest']!r}, the episode's is {digest!r} (another environment)."
    if actions.ndim != 2 or actions.shape[1] != config.num_nodes:
        return f"actions have shape {actions.shape}, not (decisions, {config.num_nodes})."
    try:
        replayed = replay(config, job.seed, decisions, actions)
    except ValueError as e:
        return f"actions do not replay: {e}"
    for name in METRIC_KEYS:
        reported, actual = row[name], replayed[name]
        if not _same(reported, actual):
            return f"{name} is {reported!r} in the row, {actual!r} on replay."
    return None


def _same(reported: object, actual: float) -> bool:
    """Equal, or both NaN; a non-number never is."""
    if not isinstance(reported, (int, float)) or isinstance(reported, bool):
        return False
    return reported == actual or (math.isnan(reported) and math.isnan(actual))
