"""The sweep's reports: completion tables, paired margins, operational metrics, CSV and a plot."""

from __future__ import annotations

import csv
import textwrap
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from coreenv import CLUSTERS, METRIC_KEYS, EnvConfig
from mara_agents.intervals import improvement_probability, iqm, mean_interval, paired_interval
from mara_agents.sweep.config import SweepConfig

__all__ = [
    "CLASSIC",
    "OPERATIONAL",
    "cells",
    "cluster_caption",
    "cluster_label",
    "clusters_table",
    "completion_tables",
    "invalid_action_warnings",
    "margin_table",
    "operational_table",
    "paired_differences",
    "plot",
    "report",
    "row_differences",
    "save_cells",
    "write_reports",
]

CLASSIC = ("fifo", "edf", "lara")
"""The classic baselines a learned method's margin is measured against (the best of them)."""
OPERATIONAL = ("full_queue_fraction", "waiting_population", "steps_to_ready", "utilisation")


def report(rows: list[dict], config: SweepConfig) -> str:
    """Every table of a sweep as Markdown, followed by a warning per method with invalid actions."""
    data = cells(rows)
    tables = [cluster_caption(config), completion_tables(data, config)]
    tables += [margin_table(rows, config), operational_table(data, config)]
    return "\n\n".join([t for t in tables if t] + invalid_action_warnings(data, config))


def cluster_caption(config: SweepConfig) -> str:
    """What the sweep's cluster is, where it is not the default one ("" there)."""
    env = EnvConfig(**config.env)
    default = EnvConfig()
    if (env.num_nodes, env.num_slots) == (default.num_nodes, default.num_slots) and not (
        env.cluster_shown
    ):
        return ""
    speeds = ", ".join(map(str, env.speeds))
    return (
        f"Cluster: {env.num_nodes} nodes, {env.num_slots} slots; node speeds {speeds}; "
        f"switch cost {env.switch_cost} steps"
    )


def cluster_label(env: Mapping[str, Any]) -> str:
    """A cluster's short name, ``"M/K name"`` (`coreenv.parse_cluster` reads it back)."""
    config = EnvConfig(**env)
    fields = {k: v for k, v in env.items() if k in ("node_speeds", "switch_cost")}
    name = next((n for n, f in CLUSTERS.items() if f == fields), None)
    if name is None:
        speeds = ", ".join(map(str, config.speeds))
        name = f"speeds {speeds}, switch cost {config.switch_cost}"
    return f"{config.num_nodes}/{config.num_slots} {name}"


def clusters_table(runs: Sequence[tuple[SweepConfig, list[dict]]]) -> str:
    """Every method on every cluster: completion (%) per cluster and task set, mean ± standard
    error over its loads and episodes, then switches per completed task per cluster."""
    methods = list(dict.fromkeys(m for config, _ in runs for m in config.names))
    head = "| cluster | task set | " + " | ".join(methods) + " |"
    rule = "|---|---" + "|---" * len(methods) + "|"
    lines = ["Every method on every cluster: completion rate (%), mean ± s.e.", "", head, rule]
    switches = ["Switches per completed task", "", head.replace("task set | ", ""), rule[4:]]
    for config, rows in runs:
        label = cluster_label(config.env)
        data = cells(rows)
        for task_set in config.task_sets:
            text = []
            for method in methods:
                found = [v for (t, _, m), v in data.items() if (t, m) == (task_set, method)]
                rates = np.concatenate([v["completion_rate"] for v in found] or [np.array([])])
                if rates.size < 2:
                    text.append("–")
                    continue
                se = rates.std(ddof=1) / np.sqrt(rates.size)
                text.append(f"{100 * rates.mean():.1f} ± {100 * se:.1f}")
            lines.append(f"| {label} | {task_set} | " + " | ".join(text) + " |")
        cells_text = " | ".join(_switches_per_success(data, method) for method in methods)
        switches.append(f"| {label} | {cells_text} |")
    return "\n".join(lines) + "\n\n" + "\n".join(switches)


def write_reports(rows: list[dict], config: SweepConfig) -> str:
    """Save ``table.md``, ``cells.csv`` and ``completion.png`` in the sweep's folder (``out``).

    Returns the text of `report`.
    """
    if config.out is None:
        raise ValueError("write_reports needs SweepConfig.out, the folder to write to.")
    data = cells(rows)
    text = report(rows, config)
    (config.out / "table.md").write_text(text + "\n")
    save_cells(data, config.out / "cells.csv")
    plot(data, config, config.out / "completion.png")
    return text


def cells(rows: list[dict]) -> dict[tuple, dict[str, np.ndarray]]:
    """Per (task set, load, method): arrays of every metric over the episodes."""
    grouped = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for key, value in r.items():
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            if numeric and key != "arrival_prob":
                grouped[(r["task_set"], r["arrival_prob"], r["method"])][key].append(value)
    return {
        cell: {k: np.array(v, float) for k, v in metrics.items()}
        for cell, metrics in grouped.items()
    }


def completion_tables(data: dict, config: SweepConfig) -> str:
    """Completion rate (%) per method and load with 95% bootstrap intervals, one table per task set.

    ``mean`` averages the loads (a bootstrap stratified by load); ``vs LARA`` is the paired
    difference from LARA over the same episodes, stratified by load, with the probability that
    the method beats LARA on an episode. Followed by the interquartile means.
    """
    parts = []
    for task_set in config.task_sets:
        lines = [
            f"**{task_set}**: completion rate (%), mean [95% CI] over episodes",
            "",
            "| method | "
            + " | ".join(f"p = {p:g}" for p in config.arrival_prob)
            + " | mean | vs LARA | P(> LARA) |",
            "|---" * (len(config.arrival_prob) + 4) + "|",
        ]
        lara = [data.get((task_set, p, "lara")) for p in config.arrival_prob]
        for method in config.names:
            found = [data.get((task_set, p, method)) for p in config.arrival_prob]
            rates = [c["completion_rate"] for c in found if c is not None]
            text = [
                mean_interval(c["completion_rate"]).scaled(100).text() if c else "–" for c in found
            ]
            overall = mean_interval(rates).scaled(100).text() if rates else "–"
            margin, beats = "–", "–"
            if all(c is not None for c in found + lara):
                pairs = [_paired_by_seed(base, mine) for base, mine in zip(lara, found)]
                base, mine = [a for a, _ in pairs], [b for _, b in pairs]
                margin = paired_interval(base, mine).scaled(100).text(sign=True)
                beats = f"{improvement_probability(base, mine):.2f}"
            cells_text = " | ".join(text)
            lines.append(f"| {method} | {cells_text} | {overall} | {margin} | {beats} |")
        n = min((len(v["completion_rate"]) for v in data.values()), default=0)
        lines.append(f"\n(at least {n} episode{'' if n == 1 else 's'} per cell)")
        lines += ["", *_iqm_table(data, config, task_set)]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _iqm_table(data: dict, config: SweepConfig, task_set: str) -> list[str]:
    """Lines of the interquartile mean of completion (%) per method and load."""
    lines = [
        f"**{task_set}**: interquartile mean of completion (%)",
        "",
        "| method | " + " | ".join(f"p = {p:g}" for p in config.arrival_prob) + " |",
        "|---" * (len(config.arrival_prob) + 1) + "|",
    ]
    for method in config.names:
        found = [data.get((task_set, p, method)) for p in config.arrival_prob]
        text = [f"{100 * iqm(c['completion_rate']):.1f}" if c else "–" for c in found]
        lines.append(f"| {method} | " + " | ".join(text) + " |")
    return lines


def _paired_by_seed(first: dict, second: dict) -> tuple[np.ndarray, np.ndarray]:
    """Two cells' completion rates on the seeds both played, in seed order."""
    a = dict(zip(first["seed"].tolist(), first["completion_rate"]))
    b = dict(zip(second["seed"].tolist(), second["completion_rate"]))
    seeds = sorted(a.keys() & b.keys())
    return np.array([a[s] for s in seeds]), np.array([b[s] for s in seeds])


def margin_table(rows: list[dict], config: SweepConfig) -> str:
    """Each learned method's margin over the strongest classic baseline, and its share of Oracle.

    Per cell: points over the best of FIFO, EDF and LARA there (the mean per-episode difference
    on the same seeds, with its 95% bootstrap interval), then completion as a percentage of
    Oracle's.
    """
    rates = defaultdict(dict)
    for r in rows:
        rates[(r["method"], r["task_set"], r["arrival_prob"])][r["seed"]] = r["completion_rate"]
    learned = [m for m in config.names if m not in (*CLASSIC, "random", "oracle")]
    lines = [
        "Margin over the best of FIFO, EDF and LARA (points, paired by seed, 95% CI) and share "
        "of Oracle",
        "",
        "| method | task set | " + " | ".join(f"p = {p:g}" for p in config.arrival_prob) + " |",
        "|---" * (len(config.arrival_prob) + 2) + "|",
    ]
    for method in learned:
        for task_set in config.task_sets:
            text = []
            for p in config.arrival_prob:
                mine, oracle = rates[(method, task_set, p)], rates[("oracle", task_set, p)]
                classic = [rates[(c, task_set, p)] for c in CLASSIC]
                seeds = sorted(set(mine).intersection(oracle, *classic))
                if not seeds:
                    text.append("–")
                    continue
                best = max(classic, key=lambda c: np.mean([c[s] for s in seeds]))
                gain = paired_interval(
                    np.array([best[s] for s in seeds]), np.array([mine[s] for s in seeds])
                )
                share = np.mean([mine[s] for s in seeds]) / np.mean([oracle[s] for s in seeds])
                text.append(f"{gain.scaled(100).text(sign=True)} ({100 * share:.0f}%)")
            lines.append(f"| {method} | {task_set} | " + " | ".join(text) + " |")
    return "\n".join(lines) if learned else ""


def operational_table(data: dict, config: SweepConfig) -> str:
    """Operational metrics and invalid actions per method, averaged over every task set and load.

    ``invalid actions`` are node actions per episode that named an empty slot, a slot another node
    took, or no slot at all: the environment idled those nodes (``conflicts`` in the rows).
    ``switches / success``: the times a task resumed on another node or after a pause, per task
    completed (each cost ``switch_cost`` steps, where the cluster sets one).
    """
    columns = [*OPERATIONAL, "conflicts"]
    lines = [
        "Operational metrics (mean over task sets and loads)",
        "",
        "| method | "
        + " | ".join(OPERATIONAL)
        + " | invalid actions / episode | switches / success |",
        "|---" * (len(columns) + 2) + "|",
    ]
    for method in config.names:
        values = []
        for metric in columns:
            means = [
                np.nanmean(v[metric])
                for (_, _, m), v in data.items()
                if m == method and not np.all(np.isnan(v[metric]))
            ]
            values.append(f"{np.mean(means):.3f}" if means else "–")
        values.append(_switches_per_success(data, method))
        lines.append(f"| {method} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def _switches_per_success(data: dict, method: str) -> str:
    """``method``'s switches per completed task over all its episodes ("–" where none is known)."""
    found = [v for (_, _, m), v in data.items() if m == method and "switches" in v]
    successes = sum(v["successes"].sum() for v in found)
    if not found or not successes:
        return "–"
    return f"{sum(v['switches'].sum() for v in found) / successes:.2f}"


def invalid_action_warnings(data: dict, config: SweepConfig) -> list[str]:
    """One warning per method whose nodes made invalid actions (each was idled, not carried out)."""
    warnings = []
    for method in config.names:
        arrays = [v["conflicts"] for (_, _, m), v in data.items() if m == method]
        counts = np.concatenate(arrays) if arrays else np.zeros(0)
        if counts.sum() > 0:
            warnings.append(
                f"WARNING: {method} made {counts.mean():.1f} invalid actions per episode "
                f"(in {np.count_nonzero(counts)} of {counts.size} episodes); the environment "
                "idled those nodes, so its results understate what it meant to do. Rerun with "
                "--strict to stop at the first one."
            )
    return warnings


def save_cells(data: dict, path: Path) -> None:
    """Mean, std and standard error of every metric per cell, as CSV.

    The completion rate also gets its 95% bootstrap interval and interquartile mean.
    """
    metrics = ["completion_rate", "feasibility_bound", *OPERATIONAL, "conflicts", "arrivals"]
    metrics.append("seconds")
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "task_set",
                "arrival_prob",
                "method",
                "episodes",
                *(f"{m}_{s}" for m in metrics for s in ("mean", "std", "se")),
                *(f"completion_rate_{s}" for s in ("ci_low", "ci_high", "iqm")),
            ]
        )
        for (task_set, arrival_prob, method), values in sorted(data.items()):
            stats = []
            for m in metrics:
                v = values[m][~np.isnan(values[m])]
                stats += (
                    [v.mean(), v.std(), v.std() / np.sqrt(max(len(v), 1))] if len(v) else [""] * 3
                )
            rates = values["completion_rate"]
            interval = mean_interval(rates)
            stats += [interval.low, interval.high, iqm(rates)]
            writer.writerow([task_set, arrival_prob, method, len(rates), *stats])


def plot(data: dict, config: SweepConfig, path: Path) -> None:
    """Completion rate against load, one panel per task set, with 95% bootstrap intervals."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    fig, axes = plt.subplots(
        1,
        len(config.task_sets),
        figsize=(4.5 * len(config.task_sets), 3.5),
        squeeze=False,
        sharey=True,
    )
    for ax, task_set in zip(axes[0], config.task_sets):
        for method in config.names:
            points = [
                (p, data[(task_set, p, method)]["completion_rate"])
                for p in config.arrival_prob
                if (task_set, p, method) in data
            ]
            if points:
                loads, rates = zip(*points)
                intervals = [mean_interval(r).scaled(100) for r in rates]
                means = [i.estimate for i in intervals]
                errors = [
                    [i.estimate - i.low for i in intervals],
                    [i.high - i.estimate for i in intervals],
                ]
                ax.errorbar(loads, means, yerr=errors, marker="o", capsize=3, label=method)
        ax.set_title(task_set)
        ax.set_xlabel("arrival rate p")
    axes[0, 0].set_ylabel("completion rate (%)")
    axes[0, -1].legend(fontsize=8)
    caption = cluster_caption(config)
    if caption:  # wrapped to the figure's width (about 14 characters per inch at this size)
        fig.suptitle(textwrap.fill(caption, int(14 * fig.get_figwidth())), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def row_differences(before: list[dict], after: list[dict]) -> list[str]:
    """What differs between two sweeps' rows of the same episodes, ignoring wall time.

    Episodes are matched by (method, task set, load, seed); each metric both rows record must be
    equal (NaN equals NaN): rows of a release with fewer metrics compare on theirs. Returns one
    line per difference, and per episode found in only one of them.
    """

    def by_episode(rows: list[dict]) -> dict[tuple, dict]:
        return {(r["method"], r["task_set"], r["arrival_prob"], r["seed"]): r for r in rows}

    a, b = by_episode(before), by_episode(after)
    lines = [f"only in the first: {key}" for key in sorted(a.keys() - b.keys())]
    lines += [f"only in the second: {key}" for key in sorted(b.keys() - a.keys())]
    for key in sorted(a.keys() & b.keys()):
        for metric in METRIC_KEYS:
            if metric not in a[key] or metric not in b[key]:
                continue
            x, y = a[key][metric], b[key][metric]
            if x != y and not (x != x and y != y):  # NaN == NaN here
                lines.append(f"{key} {metric}: {x!r} != {y!r}")
    return lines


def paired_differences(before: list[dict], after: list[dict], metric: str) -> list[str]:
    """A Markdown table of ``metric`` in ``after`` minus ``before``, paired by episode seed.

    One line per (method, task set, load) found in both: the mean difference ± its standard
    error over the shared seeds, and the shares of episodes that got better and worse.
    """
    values: dict[tuple, dict] = defaultdict(dict)
    for which, rows in (("before", before), ("after", after)):
        for r in rows:
            values[(r["method"], r["task_set"], r["arrival_prob"])].setdefault(which, {})[
                r["seed"]
            ] = r[metric]
    lines = [
        f"| method | task set | p | episodes | {metric}: after − before | better | worse |",
        "|---|---|---|---|---|---|---|",
    ]
    for (method, task_set, arrival_prob), both in sorted(values.items()):
        seeds = sorted(set(both.get("before", {})) & set(both.get("after", {})))
        if not seeds:
            continue
        diff = np.array([both["after"][s] - both["before"][s] for s in seeds], float)
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        lines.append(
            f"| {method} | {task_set} | {arrival_prob:g} | {len(diff)} | "
            f"{diff.mean():+.4f} ± {se:.4f} | {np.mean(diff > 0):.0%} | {np.mean(diff < 0):.0%} |"
        )
    return lines
