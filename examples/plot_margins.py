"""Plot your scheduler's paired margin over every other method of a sweep (docs/tutorial.md).

    python plot_margins.py results/<run name> [--method shortest_hopeful]

Reads the last run's rows (``run.json``, ``rows.jsonl``); for each task set and p, the mean
per-episode difference in completion rate (points, paired by episode seed) with its standard
error. Writes ``margins.png``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from mara_agents.sweep import METHODS, read_rows  # noqa: E402


def run_rates(out: Path) -> tuple[list[str], dict[tuple, dict[int, float]]]:
    """The last run's methods, and completion rate per (method, task set, p) and seed.

    ``rows.jsonl`` may also hold rows of earlier runs (other code); ``run.json`` names this run's.
    """
    run = json.loads((out / "run.json").read_text())
    rates: dict[tuple, dict[int, float]] = defaultdict(dict)
    for r in read_rows(out / "rows.jsonl"):  # tolerates a line cut short by an interruption
        if r.get("fingerprint") in run["fingerprints"] and r["method"] in run["methods"]:
            rates[(r["method"], r["task_set"], r["arrival_prob"])][r["seed"]] = r["completion_rate"]
    return run["methods"], rates


def main() -> None:
    """Parse the arguments, compute the paired margins, save the plot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the sweep's results folder")
    parser.add_argument(
        "--method", help="your method, as the tables label it; default: the first not built in"
    )
    args = parser.parse_args()
    methods, rates = run_rates(args.out)
    mine = args.method or next((m for m in methods if m not in METHODS), None)
    if mine not in methods:
        parser.error(f"method {mine!r} is not in the sweep; methods: {methods}.")
    cells = sorted({(t, p) for m, t, p in rates if m == mine})
    others = [m for m in methods if m != mine]
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(cells) * len(others) / 2, 3.5))
    width = 0.8 / max(len(others), 1)
    for i, other in enumerate(others):
        means, errors = [], []
        for cell in cells:
            a, b = rates[(mine, *cell)], rates[(other, *cell)]
            diff = 100 * np.array([a[s] - b[s] for s in sorted(set(a) & set(b))])
            means.append(diff.mean() if diff.size else np.nan)
            errors.append(diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else 0.0)
        ax.bar(np.arange(len(cells)) + i * width, means, width, yerr=errors, label=f"vs {other}")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(cells)) + width * (len(others) - 1) / 2)
    ax.set_xticklabels([f"{t}\np={p:g}" for t, p in cells])
    ax.set_ylabel("paired margin (points)")
    ax.set_title(f"{mine} − each other method (mean ± SE over paired episodes)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out / "margins.png", dpi=100)
    print(f"saved {args.out / 'margins.png'}")


if __name__ == "__main__":
    main()
