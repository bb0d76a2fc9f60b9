"""The report of the history protocol: `HistoryResults` as a markdown table and CSV rows.

`history_table` prints one row per predictor and ``k`` (finished tasks of the query's kind), the
capped MAE and success accuracy of each set in columns; `write_history` writes it as
``history.md`` and every score as ``history.csv`` (`HISTORY_COLUMNS`).
"""

from __future__ import annotations

import csv
from pathlib import Path

from coreenv_lab.predictor_eval.history import HistoryResults
from mara_agents.predictor_eval.report import score_fields

__all__ = ["HISTORY_COLUMNS", "history_table", "write_history"]

HISTORY_COLUMNS = ["rows", "predictor", "reads_context", "finished", "same_kind"]
HISTORY_COLUMNS += ["fewest_same_kind", "other_kinds", "queries", "capped_mae"]
HISTORY_COLUMNS += ["success_accuracy", "success_share", "ece", "auc"]
"""The header of ``history.csv``: one row per set, predictor and k (``finished``). ``same_kind``
and ``other_kinds``: the mean tasks of the query's kind and of other kinds in a history,
``fewest_same_kind`` the fewest of its kind. No latency: the same seed writes the same file."""


def _predictors(results: HistoryResults) -> list[str]:
    """The predictors' names in the order they were scored."""
    return list(results.reads_context)


def _spread(results: HistoryResults, name: str) -> float:
    """The largest gap across k in a predictor's capped MAE or accuracy (%) on one set."""
    gaps = [0.0]
    for rows in results.task_sets:
        scores = [results.scores[(rows, k, name)] for k in results.config.finished]
        for values in ([s.capped_mae for s in scores], [100 * s.success_accuracy for s in scores]):
            gaps.append(max(values) - min(values))
    return max(gaps)


def history_table(results: HistoryResults) -> str:
    """The markdown report: a line per set, the table of scores, the history sizes, the check."""
    config = results.config
    sets = list(results.task_sets)
    lines = [
        f"history protocol: kinds by {' + '.join(config.kind_fields)}; environment queries, up to "
        f"{config.queries.per_curve} per run (seed {config.queries.seed}); histories seed "
        f"{config.seed}",
        "",
    ]
    for rows, summary in results.task_sets.items():
        lines.append(
            f"- {rows}: {summary.kinds} kind(s) over {summary.runs} runs, {summary.queries} queries"
        )
    header = "| predictor | k |" + "".join(f" {s} MAE | {s} accuracy (%) |" for s in sets)
    lines += ["", header, "|---|---|" + "---|---|" * len(sets)]
    for name in _predictors(results):
        label = name if results.reads_context[name] else f"{name} (no context)"
        for k in config.finished:
            cells = "".join(
                f" {s.capped_mae:.1f} | {100 * s.success_accuracy:.1f} |"
                for s in (results.scores[(rows, k, name)] for rows in sets)
            )
            lines.append(f"| {label} | {k} |{cells}")
    lines += [
        "",
        "finished tasks in a history: mean of the query's kind + mean of other kinds",
        "",
        "| k |" + "".join(f" {rows} |" for rows in sets),
        "|---|" + "---|" * len(sets),
    ]
    for k in config.finished:
        cells = "".join(
            f" {size.same_kind:.1f} + {size.other_kinds:.1f} |"
            for size in (results.sizes[(rows, k)] for rows in sets)
        )
        lines.append(f"| {k} |{cells}")
    plain = [name for name in _predictors(results) if not results.reads_context[name]]
    if plain:
        lines.append("")
    for name in plain:
        spread = _spread(results, name)
        lines.append(
            f"{name} reads no context: its figures are equal at every k (the same queries), a "
            "check of the protocol."
            if spread == 0
            else f"{name} reads no context, yet its figures differ by up to {spread:.3g} across "
            "k: its answers to the same queries vary between calls."
        )
    return "\n".join(lines)


def write_history(results: HistoryResults, out: Path) -> None:
    """Write ``history.md`` (`history_table`) and ``history.csv`` (`HISTORY_COLUMNS`) to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "history.md").write_text(history_table(results) + "\n")
    with (out / "history.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HISTORY_COLUMNS)
        for (rows, k, name), r in results.scores.items():
            size = results.sizes[(rows, k)]
            values = {
                "rows": rows,
                "predictor": name,
                "reads_context": results.reads_context[name],
                "finished": k,
                "same_kind": size.same_kind,
                "fewest_same_kind": size.fewest_same_kind,
                "other_kinds": size.other_kinds,
                **score_fields(r),
            }
            writer.writerow([values[column] for column in HISTORY_COLUMNS])
