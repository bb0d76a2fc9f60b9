"""design §2 episode metrics, computed from an episode's running counters."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["METRIC_KEYS", "Counters", "metrics"]

METRIC_KEYS = (
    "completion_rate",
    "successes",
    "failures",
    "arrivals",
    "feasibility_bound",
    "full_queue_fraction",
    "waiting_population",
    "steps_to_ready",
    "utilisation",
    "conflicts",
    "switches",
    "switch_steps",
)


@dataclass
class Counters:
    """Running totals for the design §2 metrics."""

    arrivals: int = 0
    successes: int = 0
    failures: int = 0
    feasible: int = 0
    unknown_demand: int = 0  # arrivals whose demand cannot be known (live curves)
    steps: int = 0
    full_queue_steps: int = 0
    waiting_sum: int = 0
    busy_node_steps: int = 0
    conflicts: int = 0
    ready_delay_sum: int = 0
    ready_count: int = 0
    switches: int = 0  # times a task resumed on another node or after a pause
    switch_steps: int = 0  # node-steps spent restoring tasks (EnvConfig.switch_cost)


def metrics(counters: Counters, num_nodes: int) -> dict[str, float]:
    """The metrics so far.

    ``switches`` counts every resumption (`coreenv.core.engine`), at any switch cost;
    ``switch_steps`` the node-steps they lost. Rates over no arrivals or steps are 0; `steps_to_ready` is NaN when no task reached prediction
    readiness (there is no delay to average), and `feasibility_bound` is NaN when some task's
    demand is unknowable (live curves).
    """
    c = counters

    def ratio(num: float, den: float) -> float:
        return num / den if den else 0.0

    return {
        "completion_rate": ratio(c.successes, c.arrivals),
        "successes": c.successes,
        "failures": c.failures,
        "arrivals": c.arrivals,
        "feasibility_bound": float("nan") if c.unknown_demand else ratio(c.feasible, c.arrivals),
        "full_queue_fraction": ratio(c.full_queue_steps, c.steps),
        "waiting_population": ratio(c.waiting_sum, c.steps),
        "steps_to_ready": c.ready_delay_sum / c.ready_count if c.ready_count else float("nan"),
        "utilisation": ratio(c.busy_node_steps, c.steps * num_nodes),
        "conflicts": c.conflicts,
        "switches": c.switches,
        "switch_steps": c.switch_steps,
    }
