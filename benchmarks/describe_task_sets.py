"""Describe task sets at the default config: demand, feasibility, and the classic baselines.

    python benchmarks/describe_task_sets.py --task-sets id rl_ood vit_ood --episodes 30

For each task set: statistics of the true demand R* and of the deadline window over many drawn
tasks, the independent-feasibility bound, and FIFO / EDF / oracle completion rates at
``--arrival-prob``.
"""

from __future__ import annotations

import numpy as np

import coreenv
from mara_agents import evaluate
from mara_agents.cli.parser import CommandParser, add_arrival_prob
from mara_agents.schedulers import EDF, FIFO, Oracle
from mara_agents.sweep import EVAL_SEED_BASE


def drawn_tasks(task_set: str, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(demands, windows) of ``count`` tasks drawn as the default scenario draws them."""
    scenario = coreenv.parallel_env(task_set=task_set).scenario
    rng = np.random.default_rng(seed)
    draws = [scenario.draw(rng) for _ in range(count)]
    return np.array([d.demand for d in draws]), np.array([d.window for d in draws])


def main(argv: list[str] | None = None) -> None:
    parser = CommandParser(prog="describe_task_sets.py", description=__doc__.splitlines()[0])
    parser.add_argument("--task-sets", nargs="+", default=["id", "rl_ood", "vit_ood"])
    add_arrival_prob(parser, 0.04, old="--load")
    parser.add_argument("--episodes", type=int, default=30)
    parser.add_argument("--tasks", type=int, default=5000, help="tasks drawn for the R* statistics")
    parser.add_argument("--seed", type=int, default=EVAL_SEED_BASE, help="evaluation seeds")
    args = parser.parse_args(argv)
    print(
        "| task set | mean R* | median R* | mean window | bound (drawn) | bound (episodes) "
        "| FIFO | EDF | oracle |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for task_set in args.task_sets:
        demand, window = drawn_tasks(task_set, args.tasks, args.seed)
        rates = {
            scheduler.name: evaluate(
                scheduler,
                args.episodes,
                args.seed,
                task_set=task_set,
                arrival_prob=args.arrival_prob,
            )
            for scheduler in (FIFO(), EDF(), Oracle())
        }
        cell = {
            name: f"{100 * r['completion_rate']:.1f} ± {100 * r['completion_rate_std']:.1f}"
            for name, r in rates.items()
        }

        print(
            f"| {task_set} | {demand.mean():.0f} | {np.median(demand):.0f} | {window.mean():.0f} "
            f"| {100 * np.mean(demand <= window):.1f} "
            f"| {100 * rates['fifo']['feasibility_bound']:.1f} "
            f"| {cell['fifo']} | {cell['edf']} | {cell['oracle']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
