"""MaskablePPO's training steps per second: the SB3 vector form against one environment.

    python benchmarks/bench_vector.py                  # 32 lanes, 16,384 steps each setup
    python benchmarks/bench_vector.py --envs 64 --steps 32768
    python benchmarks/bench_vector.py --sequential     # and the sequential event form's runs

Both setups train a fresh `MaskablePPO` (the baseline's settings) on the ID training runs at
p = 0.04 with WLS estimates, measured in the same run: the reference is one `CoreGymEnv` through
``gymnasium.make("coreenv/CoRE-v1")`` (SB3 wraps it in a one-environment `DummyVecEnv`), against
`SB3VecEnv` over ``--envs`` lanes of `CoreVectorEnv`. Each update learns from the same number of
steps (``--envs`` × ``--n-steps``), so the network's share of the work is the same; the ratio is
what the vector form buys. ``--sequential`` adds the slot-set policy on the sequential event form
(as many steps per update; a step there is one node's choice) over 8 lanes two ways: 8
`CoreSequentialEnv`s side by side in SB3's `DummyVecEnv`, and `SequentialVectorEnv` on the
batched engine through `SB3VecEnv`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv

from coreenv import CoreSequentialEnv, CoreVectorEnv, SequentialVectorEnv, make_config
from mara_agents.baselines.maskable_ppo import OBSERVED
from mara_agents.baselines.slot_set import SlotSetPolicy, slot_set_kwargs
from mara_agents.cli.parser import count
from mara_agents.predictors import make_predictor
from mara_agents.training.maskable_ppo import MaskablePPOConfig
from mara_agents.training.sb3_env import SB3VecEnv

BASELINE = MaskablePPOConfig(work=Path("unused"))
"""The baseline's settings (its work folder is not used here)."""
SEQUENTIAL_ENVS, SEQUENTIAL_BATCH = 8, 256
"""The lanes and minibatch of the sequential-form setups."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--envs", type=count, default=BASELINE.envs, help="lanes of the vector form"
    )
    parser.add_argument("--n-steps", type=count, default=BASELINE.n_steps, help="steps per lane")
    parser.add_argument("--steps", type=count, default=16_384, help="timed steps per setup")
    parser.add_argument("--threads", type=count, default=1)
    parser.add_argument("--sequential", action="store_true", help="add the sequential form's runs")
    args = parser.parse_args(argv)
    return args


def steps_per_second(
    env, n_steps: int, steps: int, policy="MlpPolicy", policy_kwargs=None, batch_size=None
) -> float:
    """Training steps per second of a fresh MaskablePPO on ``env`` (the first update untimed)."""
    c = BASELINE
    batch = min(batch_size or c.batch_size, n_steps * getattr(env, "num_envs", 1))
    policy_kwargs = policy_kwargs or {"net_arch": [c.hidden] * 2}
    model = MaskablePPO(
        policy, env, n_steps=n_steps, batch_size=batch, n_epochs=c.epochs, seed=0,
        policy_kwargs=policy_kwargs, device="cpu",
    )  # fmt: skip
    model.learn(1)  # one warm-up update: first-call costs out of the timing
    began = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - began)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    env = dict(BASELINE.env)
    single = gymnasium.make("coreenv/CoRE-v1", predictor=make_predictor(OBSERVED), **env)
    lanes = SB3VecEnv(CoreVectorEnv(args.envs, predictor=make_predictor(OBSERVED), **env))
    rollout = args.envs * args.n_steps
    rates = {
        "one CoreGymEnv (gymnasium.make)": (1, steps_per_second(single, rollout, args.steps)),
        "SB3VecEnv over CoreVectorEnv": (
            args.envs,
            steps_per_second(lanes, args.n_steps, args.steps),
        ),
    }
    if args.sequential:
        config = make_config(None, **env)
        predictor = make_predictor(OBSERVED)
        count = min(SEQUENTIAL_ENVS, rollout)
        side_by_side = DummyVecEnv(
            [lambda: CoreSequentialEnv(config, predictor=predictor, decisions="events")] * count
        )
        batched = SB3VecEnv(
            SequentialVectorEnv(count, config, predictor=predictor, decisions="events")
        )
        for name, lanes in (("DummyVecEnv", side_by_side), ("SequentialVectorEnv", batched)):
            rate = steps_per_second(
                lanes, rollout // count, args.steps, SlotSetPolicy, slot_set_kwargs(config),
                SEQUENTIAL_BATCH,
            )  # fmt: skip
            rates[f"sequential events, slot-set ({name})"] = (count, rate)
    reference = rates["one CoreGymEnv (gymnasium.make)"][1]
    print(f"MaskablePPO, {rollout} steps per update, {args.threads} torch threads")
    print("| setup | envs | training steps/s (update included) | ratio |")
    print("|---|---|---|---|")
    for name, (envs, rate) in rates.items():
        print(f"| {name} | {envs} | {rate:,.0f} | {rate / reference:.1f}x |")


if __name__ == "__main__":
    main()
