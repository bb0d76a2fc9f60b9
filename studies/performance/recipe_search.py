"""Search the RL baseline's recipe for wall time to LARA + 5 on the selection episodes.

    python studies/performance/recipe_search.py --candidates shipped e4 --seeds 1 2 3 --minutes 4

Each candidate is the shipped recipe (`mara_agents.training.recipes.RECIPES["ppo"]`) with a few
fields changed (`CANDIDATES`). It trains from scratch on the training seeds for ``--minutes`` and
is judged on the selection episodes only (never on evaluation seeds), each evaluation stamped
with the wall time since the run began (making the lanes and the network, and judging the
untrained policy, included). LARA is scored once on the same selection episodes. One JSON line
per run goes to ``--out`` (appended), so an interrupted search keeps what it finished; the table
at the end is read from that file. The search and its outcome: REPORT.md, *The fast recipe*.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch

from coreenv_lab.baselines.throughput import Evaluation, first_past, timeline
from mara_agents.evaluation import completion_rates
from mara_agents.schedulers import LARA
from mara_agents.training import TRAINING_ENV
from mara_agents.training.recipes import make_recipe

SHAPED = {**TRAINING_ENV, "shaping_beta": 1.0}
"""The training episodes with MARA's log-progress shaping (β = 1)."""

_L256 = {"envs": 256, "epochs": 4, "anneal": 3_000_000}
"""256 lanes, 4 epochs, the rate falling to 0 over 3 M steps: the cheap updates on wider batches."""

_L256_N32 = {**_L256, "n_steps": 32, "minibatches": 8, "lr": 1e-3}

CANDIDATES: dict[str, dict] = {
    "shipped": {},
    "e4": {"epochs": 4, "minibatches": 4},
    "e4_lr1e3": {"epochs": 4, "minibatches": 4, "lr": 1e-3},
    "shaped": {"env": SHAPED},
    "w32": {"width": 32},
    "w32_mb4_lr1e3": {"width": 32, "minibatches": 4, "lr": 1e-3},
    "w32_shaped": {"width": 32, "env": SHAPED},
    "e4_lr1e3_clip01": {"epochs": 4, "minibatches": 4, "lr": 1e-3, "clip": 0.1},
    "w32_lr6e4": {"width": 32, "lr": 6e-4},
    "e4_lr1e3_kl02": {"epochs": 4, "minibatches": 4, "lr": 1e-3, "target_kl": 0.02},
    "w32_mb4_lr1e3_kl02": {"width": 32, "minibatches": 4, "lr": 1e-3, "target_kl": 0.02},
    "e4_lr1e3_anneal": {"epochs": 4, "minibatches": 4, "lr": 1e-3, "anneal": 1_500_000},
    "w32_mb4_lr1e3_anneal": {"width": 32, "minibatches": 4, "lr": 1e-3, "anneal": 1_500_000},
    "l256_w32": {**_L256, "width": 32, "n_steps": 64, "minibatches": 4, "lr": 1e-3},
    "l256_w32_n32": {**_L256_N32, "width": 32},
    "l256_w32_n32_ent0": {**_L256_N32, "width": 32, "entropy": 0.0},
    "l256_w32_n32_ent001": {**_L256_N32, "width": 32, "entropy": 0.001},
    "l256_w64_n32_ent001": {**_L256_N32, "width": 64, "entropy": 0.001},
    "l256_w32_n32_ent001_g099": {**_L256_N32, "width": 32, "entropy": 0.001, "gamma": 0.99},
    "g099": {"gamma": 0.99},
    "l256_w32_n32_g099": {**_L256_N32, "width": 32, "gamma": 0.99},
    "l256_w32_n32_ent001_g0995": {**_L256_N32, "width": 32, "entropy": 0.001, "gamma": 0.995},
    "l256_w64_n32_g099": {**_L256_N32, "width": 64, "gamma": 0.99},
    "l128_w32_n32_ent001_g099": {
        **_L256_N32, "envs": 128, "width": 32, "entropy": 0.001, "gamma": 0.99
    },
}
"""Recipe fields each candidate changes (the rest: the shipped recipe's)."""

MARGIN = 0.05
"""Past LARA + 5 points of completion on the selection episodes."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", nargs="+", choices=sorted(CANDIDATES), required=True)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1])
    parser.add_argument("--minutes", type=float, default=4.0, help="wall time of each run")
    parser.add_argument("--eval-every", type=int, default=100_000, help="steps between judgings")
    parser.add_argument("--eval-episodes", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--out", type=Path, default=Path("results/recipe_search.jsonl"))
    return parser.parse_args(argv)


def run(name: str, seed: int, args: argparse.Namespace, work: Path) -> dict:
    """Train candidate ``name`` from ``seed``; its evaluations, timed."""
    fields = {"seed": seed, "minutes": args.minutes, "eval_every": args.eval_every}
    fields |= {"eval_episodes": args.eval_episodes, **CANDIDATES[name]}
    config = make_recipe("ppo", work, **fields)
    began = time.perf_counter()
    evaluations = timeline(config)
    return {
        "candidate": name,
        "seed": seed,
        "fields": CANDIDATES[name],
        "eval_every": args.eval_every,
        "eval_episodes": args.eval_episodes,
        "threads": args.threads,
        "seconds": time.perf_counter() - began,
        "evaluations": [[e.minutes, e.steps, e.score] for e in evaluations],
    }


def passed(row: dict, lara: float) -> float | None:
    """Minutes at the run's first evaluation past LARA + 5, or None."""
    past = first_past([Evaluation(*e) for e in row["evaluations"]], lara + MARGIN)
    return None if past is None else past.minutes


def table(rows: list[dict], lara: float) -> str:
    """Per candidate: runs past LARA + 5, their minutes, and the best and last scores."""
    lines = [
        f"LARA {100 * lara:.1f}% on the selection episodes; target {100 * (lara + MARGIN):.1f}%",
        "| candidate | runs | past LARA + 5 | minutes to it | best % | last % | steps/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(row["candidate"] for row in rows):
        mine = [row for row in rows if row["candidate"] == name]
        times = [passed(row, lara) for row in mine]
        reached = [t for t in times if t is not None]
        best = [100 * max(e[2] for e in row["evaluations"]) for row in mine]
        last = [100 * row["evaluations"][-1][2] for row in mine]
        rate = [row["evaluations"][-1][1] / (60 * row["evaluations"][-1][0]) for row in mine]
        shown = ", ".join("-" if t is None else f"{t:.1f}" for t in times)
        lines.append(
            f"| {name} | {len(mine)} | {len(reached)} | {shown} | {statistics.mean(best):.1f} | "
            f"{statistics.mean(last):.1f} | {statistics.mean(rate):,.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    probe = make_recipe("ppo", Path("unused"), eval_episodes=args.eval_episodes)
    episodes = (probe.eval_episodes, probe.selection_seed)
    lara = float(completion_rates(LARA(), *episodes, **probe.env).mean())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for name in args.candidates:
            with tempfile.TemporaryDirectory() as folder:
                row = run(name, seed, args, Path(folder))
            with args.out.open("a") as file:
                file.write(json.dumps(row) + "\n")
            minutes = passed(row, lara)
            print(f"{name} seed {seed}: past LARA + 5 at {minutes} min", flush=True)
    rows = [json.loads(line) for line in args.out.read_text().splitlines()]
    rows = [row for row in rows if row["eval_episodes"] == args.eval_episodes]
    print(table(rows, lara))


if __name__ == "__main__":
    main()
