"""Decision latency per environment step, as a ratio to LARA's, measured in the same run.

    taskset -c 0 python benchmarks/bench_latency.py --episodes 3      # one CPU core

A decision is everything a method spends to turn the state into node actions: its ``act`` call
plus, for methods that read estimates in their observation (MARA), the environment's calls to
that observation predictor. Environment stepping itself is not counted. M = 4, K = 8 (defaults),
ID test runs at p = 0.04, the same episodes for every method.
"""

from __future__ import annotations

import argparse
import time

from coreenv import CoreEnv, Predictor
from mara_agents.sweep import EVAL_SEED_BASE, make_scheduler

DEFAULT_METHODS = ["lara", "lara_fm", "mara_wls", "mara"]


class TimedPredictor:
    """Forwards ``estimate_batch`` to a batched predictor and adds up the seconds it spends."""

    def __init__(self, inner: Predictor) -> None:
        self.inner, self.seconds = inner, 0.0

    def estimate(self, prefix, target, budget):
        """Untimed: the environment calls ``estimate_batch``."""
        return self.inner.estimate(prefix, target, budget)

    def estimate_batch(self, prefixes, targets, budgets):
        """The inner predictor's answer, timed."""
        start = time.perf_counter()
        try:
            return self.inner.estimate_batch(prefixes, targets, budgets)
        finally:
            self.seconds += time.perf_counter() - start


def decision_ms(method: str, episodes: int, seed: int) -> float:
    """Mean milliseconds per step spent deciding (act + observation estimates)."""
    scheduler = make_scheduler(method)
    inner = scheduler.observation_predictor
    timed = TimedPredictor(inner) if inner is not None else None
    env = CoreEnv(task_set="id", arrival_prob=0.04, predictor=timed)
    acting, steps = 0.0, 0
    for episode in range(episodes):
        observations, infos = env.reset(seed=seed + episode)
        scheduler.reset(env)
        while env.agents:
            start = time.perf_counter()
            actions = scheduler.act(observations, infos)
            acting += time.perf_counter() - start
            observations, _, _, _, infos = env.step(actions)
            steps += 1
    total = acting + (timed.seconds if timed else 0.0)
    return 1e3 * total / steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=DEFAULT_METHODS)
    parser.add_argument("--episodes", type=int, default=3)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    results = {m: decision_ms(m, args.episodes, EVAL_SEED_BASE) for m in args.methods}
    reference = results.get("lara", next(iter(results.values())))
    print("| method | ms per decision | ratio to LARA |\n|---|---|---|")
    for method, ms in results.items():
        print(f"| {method} | {ms:.3f} | {ms / reference:.2f} |")


if __name__ == "__main__":
    main()
