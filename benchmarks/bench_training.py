"""PPO training throughput: environment steps per second, many lanes against the recipe's 32.

    python benchmarks/bench_training.py                   # FM estimates, 256 lanes
    python benchmarks/bench_training.py --predictor wls --updates 1

Both setups train a fresh MAT with `MARA_PPO` on the training environment (ID training runs,
p = 0.04, shaped reward) and are measured in the same run: the reference is `MARA_PPO`'s
``--reference-envs`` (32) lanes of the engine, against ``--envs`` lanes. (Until the one engine of
issue 32 the reference was 32 `CoreEnv`s stepped one by one.) FM's futures of every training
prefix are sampled once beforehand, as `train_mara` does (the time is printed apart). Torch gets
``--threads`` threads. A third setup is PPO over held decisions (`MARA_SCRATCH`,
``--held-episodes`` whole episodes per update, the same ``--epochs``): its steps are the
episodes' steps, its network passes only the decisions.
"""

from __future__ import annotations

import argparse
import dataclasses

import torch

from mara_agents.cli.parser import count
from mara_agents.training import MARA_PPO
from mara_agents.training.recipe import MARA_SCRATCH, warm_predictor
from mara_agents.training.throughput import held_throughput, training_throughput

PREDICTORS = ("fm", "wls", "none")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--predictor", choices=PREDICTORS, default="fm")
    parser.add_argument("--envs", type=count, default=256, help="lanes rolled out together")
    parser.add_argument("--reference-envs", type=count, default=MARA_PPO.envs)
    parser.add_argument("--rollout", type=count, default=MARA_PPO.rollout)
    parser.add_argument("--updates", type=count, default=2, help="timed PPO iterations each")
    parser.add_argument(
        "--epochs", type=count, default=MARA_PPO.epochs, help="PPO epochs over each rollout"
    )
    parser.add_argument("--threads", type=count, default=2)
    parser.add_argument(
        "--held-episodes",
        type=int,
        default=MARA_SCRATCH.episodes,
        help="whole episodes per update of PPO over held decisions (0: leave that setup out)",
    )
    args = parser.parse_args(argv)
    if args.held_episodes < 0:
        parser.error(f"--held-episodes must be >= 0, got {args.held_episodes}.")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    predictor = None if args.predictor == "none" else warm_predictor(args.predictor)
    setups = {"recipe's lanes": args.reference_envs, "more lanes": args.envs}
    results = {}
    for name, envs in setups.items():
        ppo = dataclasses.replace(MARA_PPO, envs=envs, rollout=args.rollout, epochs=args.epochs)
        results[name] = training_throughput(predictor, ppo, args.updates)
    if args.held_episodes:
        held = dataclasses.replace(MARA_SCRATCH, episodes=args.held_episodes, epochs=args.epochs)
        results["held decisions"] = held_throughput(predictor, held, args.updates)
        setups["held decisions"] = args.held_episodes
    reference = results["recipe's lanes"]
    print(
        f"predictor {args.predictor}, {args.threads} torch threads, rollout {args.rollout}, "
        f"{args.epochs} PPO epochs"
    )
    print("| setup | envs | rollout steps/s | training steps/s (update included) | ratio |")
    print("|---|---|---|---|---|")
    for name, result in results.items():
        envs = setups[name]
        print(
            f"| {name} | {envs} | {result.rollout:,.0f} | {result.training:,.0f} | "
            f"{result.training / reference.training:.1f}x |"
        )


if __name__ == "__main__":
    main()
