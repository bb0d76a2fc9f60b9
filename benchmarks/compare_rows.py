"""Compare two sweeps of the same episodes (e.g. before and after a change).

    python benchmarks/compare_rows.py results/before/rows.jsonl results/after/rows.jsonl
    python benchmarks/compare_rows.py before/rows.jsonl after/rows.jsonl --paired completion_rate

Episodes are matched by (method, task set, load, seed). By default every design §2 metric must
be equal (wall time is ignored): exits 1 and lists the differences if there are any. With
``--paired METRIC``: prints the paired difference of that metric per cell (mean ± standard
error, shares better and worse) instead; ``--methods FIRST SECOND`` pairs two methods (e.g.
``--methods lara_fm hop``) instead of one method before and after.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from coreenv import METRIC_KEYS
from mara_agents.sweep import read_rows
from mara_agents.sweep.report import paired_differences, row_differences


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="a rows.jsonl file")
    parser.add_argument("after", type=Path, help="another rows.jsonl file")
    parser.add_argument("--paired", choices=METRIC_KEYS, help="print this metric's differences")
    parser.add_argument(
        "--methods",
        nargs=2,
        metavar=("FIRST", "SECOND"),
        help="with --paired: compare method FIRST of the first file with SECOND of the second",
    )
    args = parser.parse_args(argv)
    if args.methods and not args.paired:
        parser.error("--methods needs --paired METRIC")
    for path in (args.before, args.after):
        if not path.is_file():
            parser.error(f"no rows file at {path}.")
    before, after = read_rows(args.before), read_rows(args.after)
    if args.methods:
        label = f"{args.methods[1]} vs {args.methods[0]}"
        before = [{**r, "method": label} for r in before if r["method"] == args.methods[0]]
        after = [{**r, "method": label} for r in after if r["method"] == args.methods[1]]
    if args.paired:
        print("\n".join(paired_differences(before, after, args.paired)))
        return
    differences = row_differences(before, after)
    for line in differences:
        print(line)
    print(f"{len(before)} and {len(after)} rows; {len(differences)} differences.")
    if differences:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
