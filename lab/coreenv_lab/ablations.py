"""The paper's component and shaping ablations as one table of sweep episodes at one load.

| row | what it isolates |
|---|---|
| MARA (MAT + FM, shaped) | the full system |
| MARA-WLS (MAT + WLS) | the predictor inside the learned allocator |
| LARA-FM (LARA + FM) | the allocator, with the better predictor |
| LARA (LARA + WLS) | the baseline |
| MARA unshaped (β = 0) | the potential shaping |

`ABLATION_METHODS` gives each row's sweep method: a name of the sweep, or for the lab's variants
``coreenv_lab.methods:NAME`` (whose scheduler plays as ``NAME``, the row's key in `ABLATIONS`).
``benchmarks/ablations.py`` plays them and prints `ablation_table`.
"""

from __future__ import annotations

import numpy as np

from mara_agents.sweep.config import SweepConfig
from mara_agents.sweep.report import cells

__all__ = ["ABLATIONS", "ABLATION_METHODS", "ablation_table"]

ABLATIONS = {
    "mara": "MARA (MAT + FM)",
    "mara_wls": "MARA-WLS (MAT + WLS)",
    "lara_fm": "LARA-FM (LARA + FM)",
    "lara": "LARA (LARA + WLS)",
    "mara_noshape": "MARA unshaped (β = 0)",
}
"""The ablation's methods by the name their rows carry, and their row labels, in table order."""

ABLATION_METHODS = {
    "mara": "mara",
    "mara_wls": "coreenv_lab.methods:mara_wls",
    "lara_fm": "lara_fm",
    "lara": "lara",
    "mara_noshape": "coreenv_lab.methods:mara_noshape",
}
"""What the sweep plays for each row of `ABLATIONS` (``SweepConfig.methods``)."""


def ablation_table(rows: list[dict], config: SweepConfig) -> str:
    """Completion rate (%) per method and task set at the sweep's one load, mean ± SE."""
    if len(config.arrival_prob) != 1:
        raise ValueError(f"an ablation runs at one arrival probability, got {config.arrival_prob}.")
    (arrival_prob,) = config.arrival_prob
    data = cells(rows)
    lines = [
        f"Ablations at p = {arrival_prob:g}: completion rate (%), mean ± standard error "
        f"({config.episodes} episodes per cell)",
        "",
        "| method | " + " | ".join(config.task_sets) + " | mean |",
        "|---" * (len(config.task_sets) + 2) + "|",
    ]
    for method in config.names:
        rates = [data[(t, arrival_prob, method)]["completion_rate"] for t in config.task_sets]
        text = [f"{100 * r.mean():.1f} ± {100 * r.std() / np.sqrt(len(r)):.1f}" for r in rates]
        mean = 100 * np.mean([r.mean() for r in rates])
        label = ABLATIONS.get(method, method)
        lines.append(f"| {label} | " + " | ".join(text) + f" | {mean:.1f} |")
    return "\n".join(lines)
