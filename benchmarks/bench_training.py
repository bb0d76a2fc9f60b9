"""Training throughput of the documented recipes, as ratios to CartPole measured in the same run.

    python benchmarks/bench_training.py                          # every recipe, 2 updates each
    python benchmarks/bench_training.py --recipes ppo_slots ippo_live --updates 4
    python benchmarks/bench_training.py --recipes ppo_slots --to-lara 10

Each recipe trains from scratch for ``--updates`` updates, timed from making its lanes and
network (start-up and PPO updates included): the RL baselines' recipes
(`coreenv_lab.baselines.recipes`: the shipped ``ppo`` and the lab's ``ppo_slots``, reading node
ids, and ``ppo_mlp``, on the sequential event form, a step one node's choice; IPPO over live
masks, a step one joint decision) and MARA's two RL recipes on a fresh MAT (`MARA_PPO`, a step
one environment step; `MARA_SCRATCH`, PPO over held decisions, its steps the episodes'
environment steps, one untimed update first). CartPole-v1's random steps per second is the
reference. The MaskablePPO recipes' updates are then counted in floating-point operations per step
learnt from (forward and backward of every epoch, torch's flop counter), beside the speed their
updates ran at. ``--to-lara MINUTES`` then trains the shipped recipe ``ppo`` from each of
``--seeds`` for up to that wall time and reports when its evaluation first reaches LARA + 5 points
on the selection episodes (LARA scored on the same episodes in the same run), in minutes on this
machine and scaled to one where CartPole takes `REFERENCE_RATE` random steps/s (the issue's
machine: minutes × this machine's rate / that one).
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path

import torch

from coreenv import Predictor
from coreenv_lab.baselines.recipes import RECIPES, make_recipe
from coreenv_lab.baselines.throughput import (
    first_past,
    ippo_throughput,
    maskable_ppo_throughput,
    timeline,
    update_flops,
)
from coreenv_lab.training.throughput import (
    Throughput,
    cartpole_steps_per_second,
    held_throughput,
    training_throughput,
)
from mara_agents.cli.parser import count
from mara_agents.evaluation import completion_rates
from mara_agents.schedulers import LARA
from mara_agents.training import MARA_PPO
from mara_agents.training.recipe import MARA_SCRATCH, warm_predictor

MARA_RECIPES = ("mat_ppo", "held_ppo")
ALL = (*RECIPES, *MARA_RECIPES)
TARGETS = {"ppo": 0.15, "ippo_live": 0.1, "held_ppo": 0.1}
"""The least ratio to CartPole each recipe should train at."""
MARGIN = 0.05
"""How far above LARA ``--to-lara`` waits for: 5 points of completion."""
REFERENCE_RATE = 100_000
"""CartPole's random steps/s on the machine the wall-time target is stated for."""


def positive_minutes(text: str) -> float:
    """A wall-time budget in minutes: a number > 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"minutes must be > 0, got {text}")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", nargs="+", choices=ALL, default=list(ALL))
    parser.add_argument("--updates", type=count, default=2, help="timed updates of each recipe")
    parser.add_argument("--n-steps", type=count, default=None,
                        help="steps per lane between updates instead of each recipe's (a quick "
                        "look: the figures are then of another recipe)")  # fmt: skip
    parser.add_argument("--held-episodes", type=count, default=None,
                        help="held_ppo's episodes per update instead of the recipe's")  # fmt: skip
    parser.add_argument("--predictor", choices=("fm", "wls", "none"), default="fm",
                        help="what MARA's recipes read (the baselines read WLS)")  # fmt: skip
    parser.add_argument("--cartpole-steps", type=count, default=100_000)
    parser.add_argument("--threads", type=count, default=2, help="torch threads")
    parser.add_argument("--seed", type=int, default=1, help="the recipes' training seed")
    parser.add_argument("--to-lara", type=positive_minutes, default=None, metavar="MINUTES")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3],
                        help="training seeds of --to-lara")  # fmt: skip
    parser.add_argument("--eval-episodes", type=count, default=None,
                        help="selection episodes of --to-lara (default: the recipe's)")  # fmt: skip
    return parser.parse_args(argv)


def throughput(
    name: str, args: argparse.Namespace, work: Path, warm: Predictor | None
) -> Throughput:
    """Time ``args.updates`` updates of recipe ``name`` from scratch (MARA's read ``warm``)."""
    steps = {} if args.n_steps is None else {"n_steps": args.n_steps}
    if name in RECIPES:
        config = make_recipe(name, work / name, seed=args.seed, **steps)
        measure = maskable_ppo_throughput if RECIPES[name][0] == "maskable_ppo" else ippo_throughput
        return measure(config, args.updates)
    if name == "mat_ppo":
        rollout = {} if args.n_steps is None else {"rollout": args.n_steps}
        return training_throughput(warm, dataclasses.replace(MARA_PPO, **rollout), args.updates)
    episodes = {} if args.held_episodes is None else {"episodes": args.held_episodes}
    return held_throughput(warm, dataclasses.replace(MARA_SCRATCH, **episodes), args.updates)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    reference = cartpole_steps_per_second(args.cartpole_steps)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        mara = args.predictor != "none" and set(args.recipes) & set(MARA_RECIPES)
        warm = warm_predictor(args.predictor) if mara else None  # futures sampled once
        results = {name: throughput(name, args, work, warm) for name in args.recipes}
        print(
            f"CartPole-v1, random actions: {reference:,.0f} steps/s; {args.threads} torch threads"
        )
        print("| recipe | steps timed | rollout steps/s | training steps/s | x CartPole | target |")
        print("|---|---|---|---|---|---|")
        for name, result in results.items():
            target = f">= {TARGETS[name]}x" if name in TARGETS else ""
            print(
                f"| {name} | {result.steps:,} | {result.rollout:,.0f} | {result.training:,.0f} | "
                f"{result.training / reference:.3f}x | {target} |"
            )
        updates(results, args, work)
        if args.to_lara is not None:
            to_lara(args, work / "to_lara", reference)


def updates(results: dict[str, Throughput], args: argparse.Namespace, work: Path) -> None:
    """What the MaskablePPO recipes' updates cost: their arithmetic, and how fast it ran."""
    rows = []
    for name, result in results.items():
        if RECIPES.get(name, ("",))[0] != "maskable_ppo":
            continue
        seconds = result.steps / result.training - result.steps / result.rollout
        flops = update_flops(make_recipe(name, work / name, seed=args.seed))
        rows.append(
            f"| {name} | {flops / 1e6:.2f} | {result.steps / seconds:,.0f} | "
            f"{flops * result.steps / seconds / 1e9:.1f} |"
        )
    if rows:
        print("\n| recipe | update MFLOP per step | steps/s of the update alone | GFLOP/s |")
        print("|---|---|---|---|")
        print("\n".join(rows))


def to_lara(args: argparse.Namespace, work: Path, reference: float) -> None:
    """Train the shipped recipe from each seed for ``--to-lara`` minutes; when past LARA + 5?"""
    overrides = {"minutes": args.to_lara}
    if args.eval_episodes is not None:
        overrides["eval_episodes"] = args.eval_episodes
    probe = make_recipe("ppo", work, **overrides)
    episodes = (probe.eval_episodes, probe.selection_seed)
    lara = float(completion_rates(LARA(), *episodes, **probe.env).mean())
    scale = reference / REFERENCE_RATE
    print(f"\nppo: LARA {100 * lara:.1f}% on the {probe.eval_episodes} selection episodes; "
          f"minutes here, and scaled to CartPole at {REFERENCE_RATE:,} steps/s "
          f"(x {scale:.2f})")  # fmt: skip
    print("| seed | past LARA + 5 (min) | scaled (min) | steps then | best % | last % |")
    print("|---|---|---|---|---|---|")
    for seed in args.seeds:
        evaluations = timeline(make_recipe("ppo", work / f"seed_{seed}", seed=seed, **overrides))
        past = first_past(evaluations, lara + MARGIN)
        best = 100 * max(e.score for e in evaluations)
        last = 100 * evaluations[-1].score
        if past is None:
            print(f"| {seed} | not within {args.to_lara:g} | - | - | {best:.1f} | {last:.1f} |")
        else:
            print(f"| {seed} | {past.minutes:.2f} | {past.minutes * scale:.2f} | {past.steps:,} | "
                  f"{best:.1f} | {last:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
