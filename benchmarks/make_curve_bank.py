"""Record the curve bank: really train every run of every family and store its loss curve.

    python benchmarks/make_curve_bank.py                  # the bundled bank (~25 min, 2 cores)
    python benchmarks/make_curve_bank.py --quick --out /tmp/quick.npz

Each finished run is cached under ``--work`` so that an interrupted generation resumes without
redoing it; runs go in parallel over ``--workers`` processes (one torch thread each, so a run is
reproducible from its seed). The bank is written with a JSON manifest beside it (same name,
``.json``): counts per family, the split rule, the loss definitions and the runs that failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from coreenv.curves import CurveBank, save_bank
from coreenv.curves.bundled import BUNDLED_BANK, TEST_EVERY
from mara_agents.curvegen import FAMILIES, RunSpec, curve_of, plan_runs
from mara_agents.curvegen.specs import RUNS_PER_FAMILY

LOSS_DEFINITIONS = {
    "supervised": "cross-entropy on the dataset's fixed 25% validation split, after every batch "
    "(index 0: before training); batches drawn with replacement",
    "rl": "1 - normalised mean return of the last 10 completed training episodes, floored at "
    "1e-3; one batch = 32 environment steps; index 0: the untrained policy over 5 episodes",
}


def split_of(spec: RunSpec) -> str:
    """The documented split, by run: every fourth ID run is held out for testing."""
    group = FAMILIES[spec.family].group
    if group != "id":
        return group
    return "id_test" if spec.index % TEST_EVERY == 0 else "id_train"


def cache_path(work: Path, spec: RunSpec) -> Path:
    return work / spec.family / f"{spec.index:04d}-{spec.batches}.npz"


def record(spec: RunSpec, work: Path) -> tuple[RunSpec, float]:
    """Train one run and cache its curve (written atomically)."""
    import torch

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=UserWarning)
    start = time.perf_counter()
    losses = curve_of(spec)
    seconds = time.perf_counter() - start
    path = cache_path(work, spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, losses=losses, seconds=seconds)
    os.replace(partial, path)
    return spec, seconds


def problem_with(losses: np.ndarray) -> str | None:
    """Why a recorded curve cannot host a task (the bank's own rules), or None."""
    if not np.all(np.isfinite(losses)) or np.any(losses <= 0):
        return "non-finite or non-positive loss"
    if losses[1:].min() >= losses[0]:
        return "never falls below its initial loss"
    return None


def run_all(specs: list[RunSpec], work: Path, workers: int) -> None:
    todo = [spec for spec in specs if not cache_path(work, spec).exists()]
    print(f"{len(specs) - len(todo)} of {len(specs)} runs cached in {work}; training {len(todo)}.")
    # slowest families first, so that the pool does not end waiting on one long run
    todo.sort(key=lambda s: (not FAMILIES[s.family].reinforcement, s.family != "vit-digits"))
    start = time.perf_counter()
    with ProcessPoolExecutor(max(workers, 1)) as pool:
        futures = [pool.submit(record, spec, work) for spec in todo]
        for done, future in enumerate(as_completed(futures), 1):
            spec, seconds = future.result()
            elapsed = time.perf_counter() - start
            eta = elapsed / done * (len(todo) - done)
            print(
                f"[{done}/{len(todo)}] {spec.family}#{spec.index} {seconds:.1f}s "
                f"(elapsed {elapsed / 60:.1f} min, about {eta / 60:.1f} min left)",
                flush=True,
            )


def assemble(specs: list[RunSpec], work: Path, out: Path, args: argparse.Namespace) -> None:
    rows, families, configs, splits, failed = [], [], [], [], []
    seconds = 0.0
    for spec in specs:
        with np.load(cache_path(work, spec)) as data:
            losses, seconds = data["losses"], seconds + float(data["seconds"])
        problem = problem_with(losses.astype(np.float32).astype(np.float64))
        if problem:
            failed.append({"family": spec.family, "index": spec.index, "problem": problem})
            continue
        rows.append(losses)
        families.append(spec.family)
        configs.append(json.dumps(spec.config(), sort_keys=True))
        splits.append(split_of(spec))
    width = max(len(r) for r in rows)
    matrix = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        matrix[i, : len(r)] = r
    out.parent.mkdir(parents=True, exist_ok=True)
    save_bank(CurveBank(matrix, families, configs, splits, name=out.stem), out, dtype=np.float32)
    import stable_baselines3
    import torch

    manifest = {
        "runs": len(rows),
        "per_family": dict(Counter(families)),
        "per_split": dict(Counter(splits)),
        "failed": failed,
        "split_rule": f"ID runs with index % {TEST_EVERY} == 0 are 'id_test', the others "
        "'id_train'; RL and ViT runs are 'rl_ood' and 'vit_ood'",
        "loss": LOSS_DEFINITIONS,
        "batches": args.batches,
        "runs_per_family": args.runs_per_family or RUNS_PER_FAMILY,
        "training_cpu_seconds": round(seconds, 1),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "stable_baselines3": stable_baselines3.__version__,
            "numpy": np.__version__,
        },
        "command": " ".join(sys.argv),
    }
    out.with_suffix(".json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(
        f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB): {len(rows)} runs, "
        f"{len(failed)} failed; {dict(Counter(families))}"
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BUNDLED_BANK)
    parser.add_argument("--work", type=Path, default=Path("results/curve_runs"))
    parser.add_argument(
        "--runs-per-family", type=int, default=None, help="default: 64 per ID/ViT, 13 per RL family"
    )
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--families", nargs="+", default=None, help=f"of {list(FAMILIES)}")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="2 runs of 40 batches per family")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs_per_family, args.batches = 2, 40
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    specs = plan_runs(args.batches, args.runs_per_family, args.families)
    run_all(specs, args.work, args.workers)
    assemble(specs, args.work, args.out, args)


if __name__ == "__main__":
    main()
