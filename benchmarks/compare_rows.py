"""Check that two sweeps gave the same results for the same episodes (e.g. before and after).

    python benchmarks/compare_rows.py results/before/rows.jsonl results/after/rows.jsonl

Episodes are matched by (method, task set, load, seed); every design §2 metric must be equal
(wall time is ignored). Exits 1 and lists the differences if there are any.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mara_agents.sweep import read_rows
from mara_agents.sweep.report import row_differences


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="a rows.jsonl file")
    parser.add_argument("after", type=Path, help="another rows.jsonl file")
    args = parser.parse_args(argv)
    for path in (args.before, args.after):
        if not path.is_file():
            parser.error(f"no rows file at {path}.")
    before, after = read_rows(args.before), read_rows(args.after)
    differences = row_differences(before, after)
    for line in differences:
        print(line)
    print(f"{len(before)} and {len(after)} rows; {len(differences)} differences.")
    if differences:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
