"""Make the shipped reference results of CoRE-Bench: every built-in method on the whole protocol.

    python benchmarks/make_references.py                 # resumable: rerun to continue
    python benchmarks/make_references.py --workers 2 --out results/references/CoRE-Bench-v1
    python benchmarks/make_references.py --methods mara  # a retrained method alone

Plays `mara_agents.benchmark.references.REFERENCE_METHODS` on every cell of the protocol
(`coreenv benchmark`'s episodes, rows in ``--out``), then writes each episode's completion rate
to ``src/mara_agents/benchmark/references/<protocol>.json.gz``, what the scorecard reads.
``--methods`` plays only the methods named (into ``OUT/played``) and keeps the other methods'
rows of ``OUT/results.jsonl``, so a retrained method does not replay the rest; the references
then record both runs' commands. Run it again whenever a built-in method or the environment
changes (the suite replays a sample of the references and fails when they are stale).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from mara_agents.benchmark.play import RESULTS, cell_of, play_protocol
from mara_agents.benchmark.protocol import CORE_BENCH_V1
from mara_agents.benchmark.references import FOLDER, REFERENCE_METHODS, make_references
from mara_agents.sweep import read_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/references") / CORE_BENCH_V1.name)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=REFERENCE_METHODS,
        default=list(REFERENCE_METHODS),
        help="play these again, keeping the other methods' rows of OUT/results.jsonl",
    )
    args = parser.parse_args()
    every = set(args.methods) == set(REFERENCE_METHODS)
    kept = [] if every else read_rows(args.out / RESULTS)
    missing = set(REFERENCE_METHODS) - set(args.methods) - {row["method"] for row in kept}
    if missing:
        parser.error(f"{args.out / RESULTS} holds no rows of {sorted(missing)}: play them too.")
    folder = args.out if every else args.out / "played"
    played = play_protocol(CORE_BENCH_V1, list(args.methods), folder, workers=args.workers)
    rows = sorted(
        [r for r in kept if r["method"] not in args.methods] + played, key=protocol_order()
    )
    (args.out / RESULTS).write_text("".join(json.dumps(row) + "\n" for row in rows))
    path = FOLDER / f"{CORE_BENCH_V1.name}.json.gz"
    make_references(rows, CORE_BENCH_V1, path)
    print(f"{len(rows)} episodes' completion written to {path}")


def protocol_order() -> Callable[[dict], tuple]:
    """A row's sort key: methods in `REFERENCE_METHODS` order, then cells in the protocol's
    order, then seeds."""
    played = [*CORE_BENCH_V1.cells(), CORE_BENCH_V1.stress_cell()]
    cells = {cell: i for i, cell in enumerate(played)}
    methods = {method: i for i, method in enumerate(REFERENCE_METHODS)}
    return lambda row: (methods[row["method"]], cells[cell_of(row, CORE_BENCH_V1)], row["seed"])


if __name__ == "__main__":
    main()
