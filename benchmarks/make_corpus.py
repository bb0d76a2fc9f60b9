"""Record the curve corpus: many kinds of training, each run's validation and training losses.

    python benchmarks/make_corpus.py                      # the shipped corpus (~20 min, 2 cores)
    python benchmarks/make_corpus.py --quick --out /tmp/corpus.npz

Every finished run is cached under ``--work``, so an interrupted recording resumes where it
stopped; runs go in parallel over ``--workers`` processes, one torch thread each, so a run is
reproducible from its seed. Writes the corpus bank (`coreenv_lab.corpus.store`) and a JSON
manifest beside it: counts per kind, family and split, the curves left out and why, versions, the
command.
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

from coreenv.curves import save_bank
from coreenv_lab.corpus import CORPUS_FAMILIES, KINDS, plan_corpus
from coreenv_lab.corpus.cache import is_cached
from coreenv_lab.corpus.families import BATCHES, RUNS_PER_FAMILY, TEST_EVERY
from coreenv_lab.corpus.store import CURVES, EMA_ALPHA, assemble_corpus, record_corpus_run
from curvegen import CORPUS
from mara_agents.cli.parser import count


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CORPUS)
    parser.add_argument("--work", type=Path, default=Path("results/corpus/runs"))
    parser.add_argument("--runs-per-family", type=count, default=RUNS_PER_FAMILY)
    parser.add_argument("--batches", type=count, default=BATCHES)
    parser.add_argument("--families", nargs="+", help="default: all; choose from --list")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, help="only these kinds")
    parser.add_argument("--workers", type=count, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true", help="2 runs of 40 batches per family")
    parser.add_argument("--list", action="store_true", help="print the families and exit")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs_per_family, args.batches = 2, 40
    unknown = sorted(set(args.families or ()) - set(CORPUS_FAMILIES))
    if unknown:
        parser.error(f"--families: unknown {unknown}; choose from {list(CORPUS_FAMILIES)}")
    narrowed = args.quick or args.families or args.kinds
    narrowed = narrowed or (args.runs_per_family, args.batches) != (RUNS_PER_FAMILY, BATCHES)
    if narrowed and args.out == CORPUS:
        parser.error(
            f"--out: a narrowed corpus (--quick, --families, --kinds, --runs-per-family or "
            f"--batches) would overwrite the shipped one at {CORPUS}; give another --out"
        )
    families = args.families or list(CORPUS_FAMILIES)
    args.families = [f for f in families if not args.kinds or CORPUS_FAMILIES[f].kind in args.kinds]
    if not args.families:
        parser.error("--families and --kinds select no family")
    return args


def run_all(specs, work: Path, workers: int) -> None:
    todo = [spec for spec in specs if not is_cached(work, spec)]
    print(f"{len(specs) - len(todo)} of {len(specs)} runs cached in {work}; training {len(todo)}.")
    todo.sort(key=lambda s: CORPUS_FAMILIES[s.family].kind != "rl")  # slowest first
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(record_corpus_run, spec, work) for spec in todo]
        for done, future in enumerate(as_completed(futures), 1):
            spec, seconds = future.result()
            elapsed = time.perf_counter() - start
            print(
                f"[{done}/{len(todo)}] {spec.family}#{spec.index} {seconds:.1f}s (elapsed "
                f"{elapsed / 60:.1f} min, about {elapsed / done * (len(todo) - done) / 60:.1f} "
                "min left)",
                flush=True,
            )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.list:
        for family in CORPUS_FAMILIES.values():
            print(f"{family.kind:15s} {family.name}")
        return
    specs = plan_corpus(args.runs_per_family, args.batches, args.families)
    run_all(specs, args.work, args.workers)
    bank, failed = assemble_corpus(specs, args.work)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_bank(bank, args.out, dtype=np.float32)
    kinds = [json.loads(text)["kind"] for text in bank.config]  # one per row, for the counts
    import torch

    manifest = {
        "rows": len(bank),
        "runs": len(specs),
        "curves": CURVES,
        "ema_alpha": EMA_ALPHA,
        "per_kind": dict(Counter(kinds)),
        "per_family": dict(Counter(bank.family.tolist())),
        "per_split": dict(Counter(bank.split.tolist())),
        "split_rule": f"runs with index % {TEST_EVERY} == 0 are 'test', the others 'train'",
        "failed": failed,
        "batches": args.batches,
        "runs_per_family": args.runs_per_family,
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "numpy": np.__version__,
        },
        "command": " ".join(sys.argv),
    }
    args.out.with_suffix(".json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(
        f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB): {len(bank)} curves of "
        f"{len(specs)} runs in {len(set(kinds))} kinds, {len(failed)} curves left out"
    )


if __name__ == "__main__":
    main()
