"""Decision latency per environment step, as a ratio to LARA's, measured in the same run.

    taskset -c 0 python benchmarks/bench_latency.py --episodes 32      # one CPU core
    taskset -c 1 python benchmarks/bench_latency.py --wall --lanes 1 8 --repeats 3
    python benchmarks/bench_latency.py --methods lara coreenv_lab.methods:mara_wls

A decision is everything a method spends to turn the state into node actions: its ``act`` (or
``act_view``) calls plus the calls to the predictor whose estimates it reads in its observation.
Environment stepping itself is not counted. M = 4, K = 8 (defaults), ID test runs at p = 0.04,
the same ``--episodes`` episodes for every method. A method with a batched form (every shipped
one) is timed twice: playing the episodes in lockstep (one call per step for all of them, as
`evaluate` and the sweep run it; the cost is divided by the episode-steps served) and one episode
at a time.

``--wall`` times whole episodes instead, environment and predictor included: for each ``--lanes``
count L, the wall time of playing the episodes of the first L seeds in lockstep (L = 1: one
episode alone), from a freshly built scheduler (its predictor's cache empty), the median of
``--repeats`` runs with the methods interleaved, as a ratio to LARA's. Each MARA
is also timed acting through `MAT.act` alone (``MARA(compiled=False)``: the same actions), the
cost before `mara_agents.policy.GreedyMAT`.

``--methods`` takes the sweep's names and ``module:function`` methods such as the lab's
``coreenv_lab.methods:mara_wls`` (the default list plays it: ``pip install -e lab``); rows are
named as the sweep names them (``mara_wls``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from coreenv import CoreEnv, EnvConfig
from mara_agents.cli.parser import count
from mara_agents.evaluation import decisions_of, run_episode, run_episodes
from mara_agents.schedulers.base import acts_in_batches, observed_config, predictor_for
from mara_agents.schedulers.mara import MARA
from mara_agents.sweep import EVAL_SEED_BASE, SweepInputError, make_scheduler, validate
from mara_agents.sweep.methods import method_factory

DEFAULT_METHODS = ["lara", "lara_fm", "coreenv_lab.methods:mara_wls", "mara"]
WALL_METHODS = ["lara", "mara"]  # --wall's default
UNCOMPILED = " (MAT.act)"  # a MARA timed with compiled=False is named so


def networks(scheduler) -> list[MARA]:
    """``[scheduler]`` for a MARA (its network has a compiled copy to switch off), else []."""
    return [scheduler] if isinstance(scheduler, MARA) else []


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
        env = CoreEnv(config, predictor=predictor, decisions=decisions_of(scheduler))
        for seed in seeds:
            run_episode(scheduler, env, seed)
    return 1e3 * watch.seconds / watch.decisions


def episode_seconds(method: str, lanes: int) -> float:
    """Wall seconds of playing the first ``lanes`` ID test episodes in lockstep, p = 0.04.

    The scheduler is built first, out of the time; a name ending in `UNCOMPILED` is its MARA
    with ``compiled=False``.
    """
    scheduler = make_scheduler(method.removesuffix(UNCOMPILED))
    if method.endswith(UNCOMPILED):
        for policy in networks(scheduler):
            policy.compiled = False
    config = EnvConfig(task_set="id", arrival_prob=0.04)
    episodes = [(config, EVAL_SEED_BASE + i) for i in range(lanes)]
    start = time.perf_counter()
    run_episodes(scheduler, episodes)
    return time.perf_counter() - start


def wall_table(methods: list[str], lanes: list[int], repeats: int) -> str:
    """The markdown table of `episode_seconds` (median of ``repeats``) and its ratio to LARA's."""
    for method in methods:  # compile, load checkpoints and curves, out of the time
        episode_seconds(method, 1)
    lines = ["| lanes | method | seconds (median) | ratio to LARA |", "|---|---|---|---|"]
    for width in lanes:
        runs: dict[str, list[float]] = {method: [] for method in methods}
        for _ in range(repeats):  # interleaved, so that a busy moment hits every method
            for method in methods:
                runs[method].append(episode_seconds(method, width))
        medians = {method: statistics.median(seconds) for method, seconds in runs.items()}
        reference = medians.get("lara", next(iter(medians.values())))
        for method, seconds in medians.items():
            lines.append(
                f"| {width} | {label(method)} | {seconds:.3f} | {seconds / reference:.2f} |"
            )
    return "\n".join(lines)


def label(method: str) -> str:
    """A row's name: the sweep's name of the method (``module:function``: its scheduler's)."""
    base = method.removesuffix(UNCOMPILED)
    return method_factory(base)[0] + method[len(base) :]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--methods", nargs="+", help="the sweep's names or module:function (default: see above)"
    )
    parser.add_argument("--episodes", type=count, default=32)
    parser.add_argument("--wall", action="store_true", help="time whole episodes (see above)")
    parser.add_argument("--lanes", nargs="+", type=count, default=[1, 8])
    parser.add_argument("--repeats", type=count, default=3)
    args = parser.parse_args(argv)
    methods = args.methods or (WALL_METHODS if args.wall else DEFAULT_METHODS)
    try:
        validate(methods, [], [])
    except SweepInputError as e:
        parser.error(f"--methods: {e}")
    import torch

    torch.set_num_threads(1)
    if args.wall:
        maras = [method for method in methods if networks(make_scheduler(method))]
        methods = [*methods, *(method + UNCOMPILED for method in maras)]
        print(wall_table(methods, args.lanes, args.repeats))
        return
    results = {}
    for method in methods:
        batched = acts_in_batches(make_scheduler(method))
        results[label(method)] = decision_ms(method, args.episodes, lockstep=False)
        if batched:
            results[f"{label(method)} (lockstep, {args.episodes} episodes)"] = decision_ms(
                method, args.episodes, lockstep=True
            )
    reference = results.get("lara", next(iter(results.values())))
    print("| method | ms per decision | ratio to LARA |\n|---|---|---|")
    for method, ms in results.items():
        print(f"| {method} | {ms:.3f} | {ms / reference:.2f} |")


if __name__ == "__main__":
    main()
