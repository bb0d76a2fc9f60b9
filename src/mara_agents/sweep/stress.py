"""The infeasible-task stress test (design §2) for every method: completion rate, mean and std.

The scenario is the same in every episode; only a stochastic scheduler varies across seeds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from mara_agents.evaluation import evaluate
from mara_agents.sweep.jobs import EVAL_SEED_BASE
from mara_agents.sweep.methods import make_scheduler

__all__ = ["stress_table"]


def stress_table(methods: Iterable[str], episodes: int, task_set: str) -> Iterator[str]:
    """The table's lines, one method at a time (each line as soon as its method is done)."""
    yield f"Infeasible-task stress test ({episodes} episodes; bound 65%)\n"
    yield "| method | completion rate (%) | std | successes | invalid actions / episode |"
    yield "|---|---|---|---|---|"
    for method in methods:
        result = evaluate(
            make_scheduler(method),
            episodes,
            EVAL_SEED_BASE,
            scenario="infeasible_stress",
            task_set=task_set,
        )
        yield (
            f"| {method} | {100 * result['completion_rate']:.1f} | "
            f"{100 * result['completion_rate_std']:.1f} | {result['successes']:.1f} | "
            f"{result['conflicts']:.1f} |"
        )
