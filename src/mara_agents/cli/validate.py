"""Check a benchmark's results: replay each episode from its logged actions and compare its metrics.

    coreenv validate results/mine/results.jsonl               # every row
    coreenv validate results/mine/results.jsonl --sample 200  # 200 rows drawn at random

A row passes when its episode digest is the one its config and seed draw, its actions play that
episode to its end and every metric it reports is the replay's. Exits 1 with one line per
failing row (the row, its episode and the field), 0 when all pass.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mara_agents.benchmark.validate import problems, sample
from mara_agents.cli.parser import CommandParser, count


def main(argv: list[str] | None = None) -> None:
    """Read the rows, replay the sample, report."""
    parser = CommandParser(prog="coreenv validate", description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results.jsonl of coreenv benchmark")
    parser.add_argument("--sample", type=count, default=None, help="rows to check (default all)")
    parser.add_argument("--seed", type=int, default=0, help="draws the sample")
    args = parser.parse_args(argv)
    if not args.results.is_file():
        parser.error(f"no such results file: {args.results}")
    try:
        rows = [json.loads(line) for line in args.results.read_text().splitlines() if line]
    except json.JSONDecodeError as e:
        parser.error(f"{args.results} is not one JSON row per line: {e}")
    if not rows:
        parser.error(f"{args.results} holds no rows.")
    checked = sample(rows, args.sample, args.seed)
    failed = list(problems(rows, checked))
    for line in failed:
        print(line)
    passed = len(checked) - len(failed)
    print(f"{passed} of {len(checked)} rows checked pass ({len(rows)} in the file).")
    if failed:
        sys.exit(1)
