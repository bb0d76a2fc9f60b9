"""Environment throughput: PettingZoo steps per second with FIFO acting, as a ratio to CartPole.

Both are measured in the same run on the same machine, so the ratio is comparable across machines:
``CartPole-v1`` through ``gymnasium.make`` with random actions is the reference.

    python benchmarks/bench_env.py [--steps 50000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

import coreenv
from mara_agents.schedulers import FIFO


def cartpole_steps_per_second(steps: int) -> float:
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def coreenv_steps_per_second(steps: int, num_nodes: int, num_slots: int) -> float:
    env = coreenv.parallel_env(num_nodes=num_nodes, num_slots=num_slots)
    scheduler = FIFO()
    episode = 0
    observations, infos = env.reset(seed=episode)
    scheduler.reset(env)
    start = time.perf_counter()
    for _ in range(steps):
        observations, _, _, _, infos = env.step(scheduler.act(observations, infos))
        if not env.agents:
            episode += 1
            observations, infos = env.reset(seed=episode)
            scheduler.reset(env)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument(
        "--repeats", type=int, default=3, help="best of this many interleaved runs each"
    )
    parser.add_argument("--num-nodes", type=int, default=4)
    parser.add_argument("--num-slots", type=int, default=8)
    args = parser.parse_args()
    reference, ours = 0.0, 0.0
    for _ in range(args.repeats):  # interleaved, so both see the same machine load
        reference = max(reference, cartpole_steps_per_second(args.steps))
        ours = max(ours, coreenv_steps_per_second(args.steps, args.num_nodes, args.num_slots))
    print(f"CartPole-v1 (gymnasium.make, random actions): {reference:10.0f} steps/s")
    print(f"coreenv M={args.num_nodes} K={args.num_slots}, FIFO acting: {ours:10.0f} steps/s")
    print(f"ratio coreenv / CartPole: {ours / reference:.3f}  (target >= 0.5)")


if __name__ == "__main__":
    main()
