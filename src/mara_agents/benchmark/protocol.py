"""CoRE-Bench: the fixed, versioned protocol every reported result is played on (docs/benchmark.md).

A protocol names everything that decides a score: the clusters, the task sets, the loads, the
evaluation seeds and episodes per cell, what a scheduler may read and the stress scenario. Any
change to any of it is a new version, so two results of one version are comparable. ``quick`` is
a fixed subset (the first load of every cluster and task set, the first episodes), for a
smoke run in about two minutes; its scores are those of the same episodes in the references.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from coreenv import CLUSTERS
from coreenv.config import capacity_load
from mara_agents.sweep import REFERENCE_LOADS

__all__ = ["CORE_BENCH_V1", "STRESS", "Cell", "Protocol"]

STRESS = "stress"
"""The cluster name of the stress test's rows."""


@dataclass(frozen=True)
class Cell:
    """One cell of the protocol: a cluster, a task set and an arrival probability."""

    cluster: str
    task_set: str
    arrival_prob: float

    @property
    def label(self) -> str:
        """``cluster / task set / p``, as the scorecard prints it."""
        return f"{self.cluster} / {self.task_set} / p {self.arrival_prob:g}"


@dataclass(frozen=True)
class Protocol:
    """A version of the benchmark: what is played, and how much of it."""

    name: str
    """The version's name, written into every result (``CoRE-Bench-v1``)."""
    clusters: Mapping[str, Mapping[str, Any]]
    """Each cluster's `EnvConfig` fields, by name (nodes, slots, speeds, switch cost)."""
    task_sets: tuple[str, ...]
    """The task sets played on every cluster."""
    loads: tuple[float, ...]
    """Arrival probabilities per four units of node speed, scaled to each cluster's capacity
    (`coreenv.config.capacity_load`)."""
    episodes: int
    """Episodes per cell, seeded `mara_agents.sweep.episode_seed` (0, i), i below it: the
    evaluation seeds, never trained or tuned on."""
    quick_episodes: int
    """Episodes per cell of the quick subset (the first load only)."""
    stress: Mapping[str, Any]
    """The `EnvConfig` fields of the infeasible-task stress test (design §2), played on the first
    cluster's ID task set at its first load, outside the scores (its bound: 65%)."""
    stress_episodes: int
    """Episodes of the stress test (the same scenario each time; only chance varies)."""
    information: str = "prefix"
    """What a scheduler may read of a task (`coreenv.EnvConfig.information`): its losses so far."""

    def cells(self, quick: bool = False) -> list[Cell]:
        """Every cell, clusters first, then task sets, then loads (quick: the first load)."""
        loads = self.loads[:1] if quick else self.loads
        return [
            Cell(cluster, task_set, self.arrival_prob(cluster, load))
            for cluster in self.clusters
            for task_set in self.task_sets
            for load in loads
        ]

    def stress_cell(self) -> Cell:
        """The stress test's cell (cluster ``"stress"``)."""
        first = next(iter(self.clusters))
        return Cell(STRESS, self.task_sets[0], self.arrival_prob(first, self.loads[0]))

    def arrival_prob(self, cluster: str, load: float) -> float:
        """The arrival probability of ``load`` on ``cluster`` (its capacity in units of speed)."""
        env = self.env(cluster)
        return capacity_load(load, env.get("num_nodes", 4), env.get("node_speeds"))

    def env(self, cluster: str) -> dict[str, Any]:
        """The `EnvConfig` fields of ``cluster``'s (or `STRESS`'s) episodes but task set and p."""
        if cluster == STRESS:
            return {**self.env(next(iter(self.clusters))), **self.stress}
        if cluster not in self.clusters:
            raise ValueError(f"cluster must be one of {sorted(self.clusters)}, got {cluster!r}.")
        return {"information": self.information, **self.clusters[cluster]}

    def cluster_of(self, env: Mapping[str, Any]) -> str:
        """The name of the cluster whose episodes a row's ``env`` fields describe."""
        for name in (*self.clusters, STRESS):
            if dict(env) == self.env(name):
                return name
        raise ValueError(f"no cluster of {self.name} has the fields {dict(env)}.")

    def episodes_of(self, cell: Cell, quick: bool = False) -> int:
        """How many episodes ``cell`` plays (seeds `episode_seed` (0, i), i below it)."""
        if cell.cluster == STRESS:
            return self.stress_episodes
        return self.quick_episodes if quick else self.episodes


CORE_BENCH_V1 = Protocol(
    name="CoRE-Bench-v1",
    clusters=MappingProxyType(
        {
            "4/8 equal": {"num_nodes": 4, "num_slots": 8},
            "8/16 equal": {"num_nodes": 8, "num_slots": 16},
            "8/16 mixed_costly": {"num_nodes": 8, "num_slots": 16, **CLUSTERS["mixed_costly"]},
        }
    ),
    task_sets=("id", "rl_ood", "vit_ood"),
    loads=REFERENCE_LOADS,
    episodes=100,
    quick_episodes=10,
    stress=MappingProxyType({"scenario": "infeasible_stress"}),
    stress_episodes=10,
)
"""The first version: 3 clusters × 3 task sets × 4 loads × 100 episodes (3,600 per method), seeds
from `EVAL_SEED_BASE`; the mixed cluster has speeds 1, 1, 2, 4 twice and a switch cost of 5."""
