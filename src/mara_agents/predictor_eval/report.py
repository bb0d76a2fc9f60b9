"""The report of `coreenv eval-predictors`: scores by group of runs and predictor, as tables.

A report is a `Results` mapping (group of runs, predictor name) -> `PredictorScore`, one per kind
of queries; `report` prints it as markdown tables, `plot_reliability` draws its reliability
diagrams and `write_reports` writes every kind's tables, CSV rows and plots to a folder.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from coreenv.curves import CurveBank
from mara_agents.predictor_eval.queries import (
    PredictorScore,
    QueryConfig,
    compare_scores,
    score_banks,
)
from mara_agents.predictors import make_predictor

__all__ = [
    "COLUMNS",
    "TARGET_RATIO",
    "Results",
    "plot_reliability",
    "report",
    "score_shipped",
    "write_reports",
]

TARGET_RATIO = 0.7
"""Fold target: FM's capped MAE at most this share of WLS's on every fold."""

COLUMNS = ["rows", "predictor", "targets", "queries", "capped_mae", "success_accuracy"]
COLUMNS += ["success_share"]
COLUMNS += ["ece", "auc", "latency_ms"]
"""The header of ``predictors.csv``: one row per group of runs, predictor and kind of queries."""

Results = dict[tuple[str, str], PredictorScore]
"""(group of runs, predictor name) -> its score."""


def score_shipped(
    groups: dict[str, CurveBank],
    names: list[str],
    config: QueryConfig,
    horizon: int,
) -> Results:
    """Predictors by their names in `PREDICTORS`, as shipped, on every group of runs."""
    predictors = {name: make_predictor(name) for name in names}
    return score_banks(groups, predictors, config, horizon)


def report(results: Results, config: QueryConfig, folded: bool = False) -> str:
    """The markdown tables: every score, FM against WLS per group and, ``folded``, the worst fold.

    Fold groups are named ``fold <name>``.
    """
    lines = [
        f"queries: {config.targets} protocol, up to {config.per_curve} per run "
        f"(seed {config.seed})",
        "",
        "| runs | predictor | queries | capped MAE | success accuracy (%) | successes (%) | ECE "
        "| AUC | latency (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (rows, name), r in results.items():
        auc = "n/a" if math.isnan(r.auc) else f"{r.auc:.3f}"  # n/a: one class only
        lines.append(
            f"| {rows} | {name} | {r.queries} | {r.capped_mae:.1f} | "
            f"{100 * r.success_accuracy:.1f} | {100 * r.success_share:.1f} | "
            f"{r.calibration_error:.3f} | {auc} | {r.latency_ms:.2f} |"
        )
    groups = [rows for rows, name in results if name == "fm" and (rows, "wls") in results]
    if groups:
        lines += [
            "",
            "| runs | FM MAE / WLS MAE | MAE reduction | accuracy gain | latency FM / WLS |",
            "|---|---|---|---|---|",
        ]
        for rows in groups:
            fm, wls = results[(rows, "fm")], results[(rows, "wls")]
            c = compare_scores(fm, wls)
            lines.append(
                f"| {rows} | {fm.capped_mae / wls.capped_mae:.2f} | {100 * c.mae_reduction:.1f}% | "
                f"{100 * c.accuracy_gain:+.1f} | {c.latency_ratio:.1f}x |"
            )
    folds = [rows for rows in groups if rows.startswith("fold ")]
    if folded and folds:
        ratio = {
            rows: results[(rows, "fm")].capped_mae / results[(rows, "wls")].capped_mae
            for rows in folds
        }
        worst = max(folds, key=ratio.get)
        met = sum(
            ratio[rows] <= TARGET_RATIO
            and results[(rows, "fm")].success_accuracy >= results[(rows, "wls")].success_accuracy
            for rows in folds
        )
        lines += [
            "",
            f"worst fold: {worst.removeprefix('fold ')} (FM MAE / WLS MAE {ratio[worst]:.2f}); "
            f"{met} of {len(folds)} folds meet MAE ratio <= {TARGET_RATIO} and accuracy >= WLS's",
        ]
    return "\n".join(lines)


def plot_reliability(results: Results, path: Path) -> None:
    """One panel per group of runs: observed success share against predicted probability."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(dict.fromkeys(rows for rows, _ in results))
    cols = min(4, len(groups))
    nrows = -(-len(groups) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.2 * cols, 3.0 * nrows), squeeze=False)
    for ax, rows in zip(axes.flat, groups):
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--")
        for (group, name), r in results.items():
            if group == rows:
                d = r.reliability
                full = d.count > 0
                ax.plot(
                    d.predicted[full],
                    d.observed[full],
                    marker="o",
                    markersize=3,
                    label=f"{name} (ECE {r.calibration_error:.3f})",
                )
        ax.set_title(rows, fontsize=9)
        ax.set_xlabel("predicted P(success)", fontsize=8)
        ax.set_ylabel("observed share", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    for ax in axes.flat[len(groups) :]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_reports(tables: dict[str, tuple[Results, str]], out: Path) -> None:
    """Write ``predictors.md``, ``predictors.csv`` and the reliability plots to ``out``.

    ``tables``: kind of queries -> (its results, its `report`). One kind's plot is
    ``reliability.png``; several kinds' are ``reliability-<kind>.png``.
    """
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for targets, (results, _) in tables.items():
        suffix = "" if len(tables) == 1 else f"-{targets}"
        plot_reliability(results, out / f"reliability{suffix}.png")
        for (group, name), r in results.items():
            values = {
                "rows": group,
                "predictor": name,
                "targets": targets,
                **score_fields(r),
                "latency_ms": r.latency_ms,
            }
            rows.append([values[column] for column in COLUMNS])  # one value per header column
    (out / "predictors.md").write_text("\n\n".join(text for _, text in tables.values()) + "\n")
    with (out / "predictors.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)


def score_fields(score: PredictorScore) -> dict[str, float]:
    """A score's figures under their CSV column names (every report's rows share them)."""
    return {
        "queries": score.queries,
        "capped_mae": score.capped_mae,
        "success_accuracy": score.success_accuracy,
        "success_share": score.success_share,
        "ece": score.calibration_error,
        "auc": score.auc,
    }
