"""The report of `coreenv_lab.commands.learning_curves`: tables of runs' curves, and their plot.

An *arm* is one recipe's runs, a label mapped to their `LearningCurve`s in training-seed order.
Each function returns the markdown lines of one table (`plot_arms` draws the figure); the
completion rates they compare against (LARA's, a run's last policy's) are played here on the
episodes named.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from coreenv_lab.training.curves import LearningCurve, last_policies, paired_runs
from mara_agents import seeds
from mara_agents.evaluation import completion_rates, paired_difference
from mara_agents.schedulers import LARA

__all__ = [
    "Arms",
    "curve_table",
    "last_policies_table",
    "paired_table",
    "plot_arms",
    "runs_table",
    "spread",
]

Arms = dict[str, list[LearningCurve]]
"""Label of a recipe -> its runs' curves, in training-seed order."""


def spread(values: np.ndarray) -> str:
    """Percent mean ± sd over runs, with the range."""
    values = 100 * np.asarray(values)
    sd = values.std(ddof=1) if values.size > 1 else 0.0
    return f"{values.mean():.1f} ± {sd:.1f} ({values.min():.1f}–{values.max():.1f})"


def curve_table(arms: Arms) -> list[str]:
    """Completion at every evaluation the runs share: each arm's mean ± sd over runs (range)."""
    episodes = next(iter(arms.values()))[0].rates.shape[1]
    lines = [
        f"## Completion (%) on the {episodes} selection episodes, mean ± sd over runs (range)",
        "",
        "| evaluation | steps (M) | " + " | ".join(arms) + " |",
        "|---|---|" + "---|" * len(arms),
    ]
    points = min(len(c.steps) for curves in arms.values() for c in curves)
    for i in range(points):
        steps = np.mean([c.steps[i] for curves in arms.values() for c in curves]) / 1e6
        cells = [spread([c.means[i] for c in curves]) for curves in arms.values()]
        lines.append(f"| {i} | {steps:.2f} | " + " | ".join(cells) + " |")
    return lines


def runs_table(arms: Arms, reference: np.ndarray) -> list[str]:
    """Each run's final, best and area, and its final completion against ``reference``'s.

    ``reference``: per-episode completion of a baseline on the same selection episodes.
    """
    lines = [
        "## Runs",
        "",
        "| arm | run | steps (M) | final | best | last − best | area | final − LARA (± SE) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, curves in arms.items():
        for c in curves:
            gain, se = paired_difference(reference, c.rates[-1])
            lines.append(
                f"| {label} | {c.name} | {c.steps[-1] / 1e6:.2f} | {100 * c.final:.1f} | "
                f"{100 * c.best:.1f} | {100 * (c.final - c.best):+.1f} | "
                f"{100 * c.area().mean():.1f} | {100 * gain:+.2f} ± {100 * se:.2f} |"
            )
    return lines


def paired_table(arms: Arms) -> list[str]:
    """The first arm − the second, paired by seed and selection episode (needs two arms)."""
    (first, a), (second, b) = list(arms.items())[:2]
    pairs = " | ".join(f"pair {i + 1}" for i in range(len(a)))
    lines = [
        f"## {first} − {second}, paired by seed and selection episode (points)",
        "",
        f"| measure | {pairs} | mean ± SE over seeds |",
        "|---|" + "---|" * (len(a) + 1),
    ]
    for measure in ("final", "area"):
        d = paired_runs(a, b, measure)
        cells = " | ".join(
            f"{100 * m:+.2f} ± {100 * s:.2f}" for m, s in zip(d.per_seed, d.per_seed_se)
        )
        lines.append(f"| {measure} | {cells} | {100 * d.mean:+.2f} ± {100 * d.se:.2f} |")
    return lines


def last_policies_table(runs: dict[str, list[Path]], episodes: int, env: dict) -> list[str]:
    """Each run's last policy and LARA on ``episodes`` evaluation episodes of ``env``.

    ``runs``: label -> the arm's work folders. The episodes start at `seeds.EVALUATION`, never
    trained on.
    """
    lines = [
        f"## Last policies on {env['task_set']} at p = {env['arrival_prob']}: {episodes} episodes",
        "",
    ]
    lara = completion_rates(LARA(), episodes, seeds.EVALUATION, **env)
    lines += [f"LARA: {100 * lara.mean():.1f}", ""]
    lines += ["| arm | run | completion | − LARA (paired ± SE) |", "|---|---|---|---|"]
    for label, works in runs.items():
        for work, policy in zip(works, last_policies(works)):
            rates = completion_rates(policy, episodes, seeds.EVALUATION, **env)
            gain, se = paired_difference(lara, rates)
            lines.append(
                f"| {label} | {work.name} | {100 * rates.mean():.1f} | "
                f"{100 * gain:+.2f} ± {100 * se:.2f} |"
            )
    return lines


def plot_arms(arms: Arms, lara: float, path: Path) -> None:
    """Each arm's runs (thin) and their mean (thick) against environment steps; LARA dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for index, (label, curves) in enumerate(arms.items()):
        colour = f"C{index % 10}"  # matplotlib's colour cycle
        for c in curves:
            axes.plot(c.steps / 1e6, 100 * c.means, color=colour, alpha=0.35, linewidth=1)
        points = min(len(c.steps) for c in curves)
        steps = np.mean([c.steps[:points] for c in curves], axis=0) / 1e6
        means = np.mean([c.means[:points] for c in curves], axis=0)
        axes.plot(steps, 100 * means, color=colour, linewidth=2.5, label=label)
    axes.axhline(100 * lara, color="black", linestyle="--", linewidth=1, label="LARA")
    axes.set_xlabel("environment steps (millions)")
    axes.set_ylabel("completion on selection episodes (%)")
    axes.grid(alpha=0.3)
    axes.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
