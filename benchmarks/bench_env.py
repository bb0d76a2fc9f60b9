"""Environment throughput, each figure as a ratio to CartPole-v1 measured in the same run.

``CartPole-v1`` through ``gymnasium.make`` with random actions is the reference, so the ratios
are comparable across machines. Measured, interleaved and best of ``--repeats`` each:

* one `CoreEnv` step through the PettingZoo parallel API: ``env.step`` alone, replaying the
  actions FIFO chose in a first pass, and with FIFO acting (its own time included);
* `coreenv.BatchedCore` lane-steps per second for each lane count of ``--lanes``, its actions
  computed from the masks (each node takes the next occupied slot: a matching without conflicts,
  as FIFO's) and random unmasked ones (conflicts and empty slots included); only ``step`` is
  timed, after ``--warmup`` steps that let the lanes' episodes drift out of phase;
* `coreenv.CoreVectorEnv` in the event decision form over ``--event-lanes`` lanes, the same
  matching acting: environment steps per second (each lane's ``elapsed`` summed);
* the sequential form in the event decision form, random choices from the live masks: node
  choices per second of one `coreenv.CoreSequentialEnv` and of `coreenv.SequentialVectorEnv`
  for each lane count of ``--sequential-lanes`` (only ``step`` timed).

    python benchmarks/bench_env.py [--steps 50000] [--repeats 3] [--lanes 64 256 1024]
        [--event-lanes 256] [--sequential-lanes 8 64 256] [--choices 20000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np

import coreenv
from coreenv_lab.training.throughput import cartpole_steps_per_second
from mara_agents.cli.parser import count
from mara_agents.schedulers import FIFO

TARGETS = {
    "env.step alone": 1.5,
    "batched B=256": 40.0,
    "batched B=1024": 60.0,
    "vector events B=256": 40.0,
}
"""The ratios to CartPole docs/performance.md states as targets."""


def fifo_steps_per_second(
    steps: int, num_nodes: int, num_slots: int, record: list | None = None
) -> float:
    """FIFO acting on episodes seeded 0, 1, …; its actions are appended to ``record``."""
    env = coreenv.parallel_env(num_nodes=num_nodes, num_slots=num_slots)
    scheduler = FIFO()
    episode = 0
    observations, infos = env.reset(seed=episode)
    scheduler.reset(env)
    start = time.perf_counter()
    for _ in range(steps):
        actions = scheduler.act(observations, infos)
        if record is not None:
            record.append(actions)
        observations, _, _, _, infos = env.step(actions)
        if not env.agents:
            episode += 1
            observations, infos = env.reset(seed=episode)
            scheduler.reset(env)
    return steps / (time.perf_counter() - start)


def replay_steps_per_second(actions: list[dict], num_nodes: int, num_slots: int) -> float:
    """``env.step`` alone on the episodes `fifo_steps_per_second` played, with its actions."""
    env = coreenv.parallel_env(num_nodes=num_nodes, num_slots=num_slots)
    episode = 0
    env.reset(seed=episode)
    start = time.perf_counter()
    for step_actions in actions:
        env.step(step_actions)
        if not env.agents:
            episode += 1
            env.reset(seed=episode)
    return len(actions) / (time.perf_counter() - start)


def matching(mask: np.ndarray, num_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """(B, M) actions: node i takes the i-th occupied slot of its lane, or idles."""
    k = mask.shape[1] - 1
    order = np.argsort(mask[:, :k] == 0, axis=1, kind="stable")[:, :num_nodes]  # occupied first
    held = np.take_along_axis(mask[:, :k], order, axis=1).astype(bool)
    return np.where(held, order, k)


def unmasked(mask: np.ndarray, num_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """(B, M) uniformly random actions in [0, K], masks ignored."""
    return rng.integers(0, mask.shape[1], (mask.shape[0], num_nodes))


POLICIES: dict[str, Callable[[np.ndarray, int, np.random.Generator], np.ndarray]] = {
    "matching": matching,
    "random unmasked": unmasked,
}


def batched_lane_steps_per_second(
    lanes: int, steps: int, warmup: int, policy: Callable, num_nodes: int, num_slots: int
) -> float:
    """Lane-steps per second of `BatchedCore.step` (the policy's time excluded)."""
    core = coreenv.BatchedCore(coreenv.EnvConfig(num_nodes=num_nodes, num_slots=num_slots), lanes)
    view = core.reset(range(10**9))
    rng = np.random.default_rng(0)
    for _ in range(warmup):
        view = core.step(policy(view.action_mask, num_nodes, rng))
    elapsed = 0.0
    for _ in range(steps):
        actions = policy(view.action_mask, num_nodes, rng)
        start = time.perf_counter()
        view = core.step(actions)
        elapsed += time.perf_counter() - start
    return lanes * steps / elapsed


def event_steps_per_second(lanes: int, steps: int, num_nodes: int, num_slots: int) -> float:
    """Environment steps per second of `CoreVectorEnv`'s event form, ``steps`` decisions timed."""
    envs = coreenv.CoreVectorEnv(
        lanes, num_nodes=num_nodes, num_slots=num_slots, decisions="events"
    )
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    played, elapsed = 0, 0.0
    for _ in range(steps):
        actions = matching(envs.action_masks()[:, : num_slots + 1].astype(np.int8), num_nodes, rng)
        start = time.perf_counter()
        _, _, _, _, infos = envs.step(actions)
        elapsed += time.perf_counter() - start
        played += int(infos["elapsed"].sum())
    return played / elapsed


def sequential_choices_per_second(
    lanes: int, choices: int, num_nodes: int, num_slots: int
) -> float:
    """Node choices per second of the sequential event form, random choices from the live masks.

    ``lanes`` 0: one `CoreSequentialEnv`; else a `SequentialVectorEnv` of that many lanes.
    """
    options = {"num_nodes": num_nodes, "num_slots": num_slots, "decisions": "events"}
    rng = np.random.default_rng(0)
    elapsed = 0.0
    if not lanes:
        env = coreenv.CoreSequentialEnv(**options)
        env.reset(seed=0)
        for _ in range(choices):
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            start = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
            elapsed += time.perf_counter() - start
        return choices / elapsed
    envs = coreenv.SequentialVectorEnv(lanes, **options)
    envs.reset(seed=0)
    calls = max(choices // lanes, 1)
    for _ in range(calls):
        masks = envs.action_masks()
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)  # uniform among allowed
        start = time.perf_counter()
        envs.step(actions)
        elapsed += time.perf_counter() - start
    return calls * lanes / elapsed


class Parser(argparse.ArgumentParser):
    """Bad arguments end the run with one line naming the problem (no usage block)."""

    def error(self, message: str) -> None:
        """Exit with ``message`` alone."""
        sys.exit(f"{self.prog}: error: {message}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = Parser(prog="bench_env.py", description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=count, default=50_000, help="CoreEnv steps per run")
    parser.add_argument(
        "--repeats", type=count, default=3, help="best of this many interleaved runs"
    )
    parser.add_argument("--num-nodes", type=count, default=4)
    parser.add_argument("--num-slots", type=count, default=8)
    parser.add_argument(
        "--lanes", type=count, nargs="+", default=[64, 256, 1024], help="BatchedCore B"
    )
    parser.add_argument(
        "--batched-steps", type=count, default=1500, help="timed BatchedCore steps per run"
    )
    parser.add_argument(
        "--event-lanes", type=count, default=256, help="CoreVectorEnv lanes, event form"
    )
    parser.add_argument(
        "--warmup", type=int, default=1200, help="untimed BatchedCore steps first (>= 0)"
    )
    parser.add_argument(
        "--sequential-lanes",
        type=count,
        nargs="+",
        default=[8, 64, 256],
        help="SequentialVectorEnv N",
    )
    parser.add_argument(
        "--choices", type=count, default=20_000, help="timed sequential choices per run"
    )
    args = parser.parse_args(argv)
    if args.warmup < 0:
        parser.error(f"argument --warmup: must be an int >= 0, got {args.warmup}")
    return args


def measure(args: argparse.Namespace) -> dict[str, float]:
    """Best rate of every figure (steps or lane-steps per second), runs interleaved."""
    m, k = args.num_nodes, args.num_slots
    recorded: list[dict] = []
    fifo_steps_per_second(args.steps, m, k, recorded)  # the first pass: FIFO's actions
    runs: dict[str, Callable[[], float]] = {
        "CartPole-v1": lambda: cartpole_steps_per_second(args.steps),
        "env.step alone": lambda: replay_steps_per_second(recorded, m, k),
        "FIFO acting": lambda: fifo_steps_per_second(args.steps, m, k),
    }
    for lanes in args.lanes:
        for name, policy in POLICIES.items():
            runs[f"batched B={lanes}, {name}"] = lambda b=lanes, p=policy: (
                batched_lane_steps_per_second(b, args.batched_steps, args.warmup, p, m, k)
            )
    runs[f"vector events B={args.event_lanes}"] = lambda: event_steps_per_second(
        args.event_lanes, args.batched_steps, m, k
    )
    for lanes in [0, *args.sequential_lanes]:
        name = f"sequential vector N={lanes}" if lanes else "sequential alone"
        runs[name] = lambda n=lanes: sequential_choices_per_second(n, args.choices, m, k)
    best = dict.fromkeys(runs, 0.0)
    for _ in range(args.repeats):  # interleaved, so every figure sees the same machine load
        for name, run in runs.items():
            best[name] = max(best[name], run())
    return best


def report(best: dict[str, float], args: argparse.Namespace) -> str:
    reference = best["CartPole-v1"]
    lines = [f"{'CartPole-v1 (gymnasium.make, random actions):':50s} {reference:10,.0f} steps/s"]
    for name, rate in best.items():
        if name == "CartPole-v1":
            continue
        unit = "steps/s" if name.startswith(("env", "FIFO")) else "lane-steps/s"
        if name.startswith("sequential"):
            unit = "choices/s"
        target = TARGETS.get(name.split(",")[0])
        wanted = f"  (target >= {target:g})" if target is not None else ""
        label = f"coreenv M={args.num_nodes} K={args.num_slots}, {name}:"
        lines.append(f"{label:50s} {rate:10,.0f} {unit:12s} ratio {rate / reference:6.2f}{wanted}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    print(report(measure(args), args))


if __name__ == "__main__":
    main()
