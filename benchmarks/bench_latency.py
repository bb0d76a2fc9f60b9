"""Decision latency per environment step, as a ratio to LARA's, measured in the same run.

    taskset -c 0 python benchmarks/bench_latency.py --episodes 32      # one CPU core

A decision is everything a method spends to turn the state into node actions: its ``act`` (or
``act_view``) calls plus the calls to the predictor whose estimates it reads in its observation.
Environment stepping itself is not counted. M = 4, K = 8 (defaults), ID test runs at p = 0.04,
the same ``--episodes`` episodes for every method. A method with a batched form (every shipped
one) is timed twice: playing the episodes in lockstep (one call per step for all of them, as
`evaluate` and the sweep run it; the cost is divided by the episode-steps served) and one episode
at a time.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from coreenv import CoreEnv, EnvConfig
from mara_agents.cli.parser import count
from mara_agents.evaluation import run_episode, run_episodes
from mara_agents.schedulers.base import acts_in_batches, observed_config, predictor_for
from mara_agents.sweep import EVAL_SEED_BASE, METHODS, make_scheduler

DEFAULT_METHODS = ["lara", "lara_fm", "mara_wls", "mara"]


class Stopwatch:
    """Adds up the seconds spent in the functions it wraps and the decisions they made."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.decisions = 0  # episode-steps decided

    def wrap(self, function: Callable, decisions: Callable) -> Callable:
        """``function``, timed; ``decisions(*args)`` counts the episode-steps of one call."""

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.decisions += decisions(*args)

        return timed


def decision_ms(method: str, episodes: int, lockstep: bool) -> float:
    """Mean milliseconds of deciding per episode-step (act + observation estimates)."""
    scheduler = make_scheduler(method)
    predictor = predictor_for(scheduler)
    watch = Stopwatch()
    if predictor is not None:
        predictor.estimate_batch = watch.wrap(predictor.estimate_batch, lambda *args: 0)
        if hasattr(predictor, "estimate_quantiles"):  # read by a policy that sees quantiles
            predictor.estimate_quantiles = watch.wrap(predictor.estimate_quantiles, lambda *a: 0)
        scheduler.observation_predictor = predictor  # the very instance, timed
    config = observed_config(scheduler, EnvConfig(task_set="id", arrival_prob=0.04))
    seeds = range(EVAL_SEED_BASE, EVAL_SEED_BASE + episodes)
    if lockstep:
        scheduler.act_view = watch.wrap(scheduler.act_view, lambda view: view.num_episodes)
        run_episodes(scheduler, [(config, seed) for seed in seeds])
    else:
        scheduler.act = watch.wrap(scheduler.act, lambda observations, infos: 1)
        env = CoreEnv(config, predictor=predictor)
        for seed in seeds:
            run_episode(scheduler, env, seed)
    return 1e3 * watch.seconds / watch.decisions


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=DEFAULT_METHODS, choices=sorted(METHODS))
    parser.add_argument("--episodes", type=count, default=32)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    results = {}
    for method in args.methods:
        batched = acts_in_batches(make_scheduler(method))
        results[method] = decision_ms(method, args.episodes, lockstep=False)
        if batched:
            results[f"{method} (lockstep, {args.episodes} episodes)"] = decision_ms(
                method, args.episodes, lockstep=True
            )
    reference = results.get("lara", next(iter(results.values())))
    print("| method | ms per decision | ratio to LARA |\n|---|---|---|")
    for method, ms in results.items():
        print(f"| {method} | {ms:.3f} | {ms / reference:.2f} |")


if __name__ == "__main__":
    main()
