"""Play CoRE-Bench for your methods and place them against the shipped references: the scorecard.

    coreenv benchmark my_pkg.sched:Mine --quick          # the quick subset, about two minutes
    coreenv benchmark my_pkg.sched:Mine --out results/mine
    coreenv validate results/mine/results.jsonl          # anyone can check the rows

Plays only the methods named, on every cell of the protocol (docs/benchmark.md, *CoRE-Bench*;
``--quick``: its fixed subset), and prints the scorecard against the built-in methods' shipped
results: per cell the mean with its 95% interval, and per method the normalised score (0: a
random matching, 1: the Oracle) as mean and IQM with intervals and the probability of beating
LARA and MARA. ``OUT/results.jsonl`` holds one row per episode with the scheduler's actions and
the episode's digest (what ``coreenv validate`` replays), ``OUT/scorecard.md`` the scorecard. A
rerun with the same ``--out`` resumes.
"""

from __future__ import annotations

import re
from pathlib import Path

from mara_agents.benchmark.play import play_protocol
from mara_agents.benchmark.protocol import CORE_BENCH_V1, STRESS
from mara_agents.benchmark.references import load_references
from mara_agents.benchmark.scorecard import scorecard
from mara_agents.cli.parser import METHODS_HELP, CommandParser, count, methods_listing
from mara_agents.sweep import playable


def main(argv: list[str] | None = None) -> None:
    """Check every method on every cluster, play the protocol, print the scorecard."""
    parser = CommandParser(
        prog="coreenv benchmark", description=__doc__.splitlines()[0], epilog=methods_listing()
    )
    parser.add_argument("methods", nargs="+", metavar="METHOD", help=METHODS_HELP)
    parser.add_argument("--quick", action="store_true", help="the protocol's quick subset")
    parser.add_argument("--out", type=Path, default=None, help="default results/benchmark/<run>")
    parser.add_argument("--workers", type=count, default=2, help="local worker processes")
    args = parser.parse_args(argv)
    protocol = CORE_BENCH_V1
    if len(set(args.methods)) != len(args.methods):
        parser.error(f"methods are named twice: {args.methods}.")
    reasons: dict[str, list[str]] = {method: [] for method in args.methods}
    for cluster in (*protocol.clusters, STRESS):
        for method, why in playable(args.methods, protocol.env(cluster))[1].items():
            reasons[method].append(why)
    for method, why in reasons.items():
        if len(why) == len(protocol.clusters) + 1:
            parser.error(f"{method} plays no cluster of {protocol.name}: {why[0]}")
    try:
        references = load_references(protocol.name)
    except FileNotFoundError as e:
        parser.error(str(e))
    name = "_".join(re.sub(r"\W+", "-", method).strip("-") for method in args.methods)[:80]
    subset = "_quick" if args.quick else ""
    out = args.out or Path("results/benchmark") / f"{protocol.name}{subset}_{name}"
    rows = play_protocol(protocol, args.methods, out, args.quick, args.workers)
    card = scorecard(rows, protocol, references, args.quick)
    (out / "scorecard.md").write_text(card + "\n")
    print(card)
    print(f"\nrows: {out / 'results.jsonl'} (check them: coreenv validate {out / 'results.jsonl'})")
