"""Plot sample recorded curves of every family of a bank (default: the bundled one) to a PNG.

python benchmarks/plot_curves.py --out docs/figures/curves.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from coreenv.curves import bundled_bank, load_bank  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bank", type=Path, default=None, help="default: the bundled bank")
    parser.add_argument("--per-family", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path("docs/figures/curves.png"))
    args = parser.parse_args(argv)
    bank = bundled_bank() if args.bank is None else load_bank(args.bank)
    families = bank.families
    cols = 4
    rows = -(-len(families) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False)
    rng = np.random.default_rng(0)
    for ax, family in zip(axes.flat, families):
        members = np.flatnonzero(bank.family == family)
        for i in rng.choice(members, min(args.per_family, members.size), replace=False):
            ax.plot(bank.curve(int(i)).losses, linewidth=0.8)
        group = "" if bank.split is None else f" [{str(bank.split[members[0]]).split('_')[0]}]"
        ax.set_title(f"{family}{group} (n={members.size})", fontsize=9)
        ax.set_yscale("log")
        ax.set_xlabel("batches", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.flat[len(families) :]:
        ax.axis("off")
    fig.suptitle("Recorded loss curves (sample runs per family; loss on a log scale)")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
