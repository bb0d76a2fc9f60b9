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
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from coreenv.curves import BUNDLED_BANK, TEST_EVERY, CurveBank, curve_problem, pad_curves, save_bank
from coreenv_lab.corpus.cache import is_cached, load_cached, record
from curvegen import FAMILIES, LOSS_DEFINITIONS, RunSpec, plan_runs
from curvegen.specs import RUNS_PER_FAMILY


def split_of(spec: RunSpec) -> str:
    """The documented split, by run: every fourth ID run is held out for testing."""
    group = FAMILIES[spec.family].group
    if group != "id":
        return group
    return "id_test" if spec.index % TEST_EVERY == 0 else "id_train"


def run_all(specs: list[RunSpec], work: Path, workers: int) -> None:
    todo = [spec for spec in specs if not is_cached(work, spec)]
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
        losses, run_seconds = load_cached(work, spec)
        seconds += run_seconds
        # judged as stored: a curve that float32 makes invalid is left out, not refused by the bank
        problem = curve_problem(losses.astype(np.float32).astype(np.float64))
        if problem is not None:
            failed.append({"family": spec.family, "index": spec.index, "problem": problem.rule})
            continue
        rows.append(losses)
        families.append(spec.family)
        configs.append(json.dumps(spec.config(), sort_keys=True))
        splits.append(split_of(spec))
    out.parent.mkdir(parents=True, exist_ok=True)
    bank = CurveBank(pad_curves(rows), families, configs, splits, name=out.stem)
    save_bank(bank, out, dtype=np.float32)
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
