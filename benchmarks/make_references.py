"""Make the shipped reference results of CoRE-Bench: every built-in method on the whole protocol.

    python benchmarks/make_references.py                 # resumable: rerun to continue
    python benchmarks/make_references.py --workers 2 --out results/references/CoRE-Bench-v1

Plays `mara_agents.benchmark.references.REFERENCE_METHODS` on every cell of the protocol
(`coreenv benchmark`'s episodes, rows in ``--out``), then writes each episode's completion rate
to ``src/mara_agents/benchmark/references/<protocol>.json.gz``, what the scorecard reads. Run it
again whenever a built-in method or the environment changes (the suite replays a sample of the
references and fails when they are stale).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mara_agents.benchmark.play import play_protocol
from mara_agents.benchmark.protocol import CORE_BENCH_V1
from mara_agents.benchmark.references import FOLDER, REFERENCE_METHODS, make_references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/references") / CORE_BENCH_V1.name)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    rows = play_protocol(CORE_BENCH_V1, list(REFERENCE_METHODS), args.out, workers=args.workers)
    path = FOLDER / f"{CORE_BENCH_V1.name}.json.gz"
    make_references(rows, CORE_BENCH_V1, path)
    print(f"{len(rows)} episodes' completion written to {path}")


if __name__ == "__main__":
    main()
