"""The shipped reference results (`mara_agents.benchmark.references`): complete, and still what the
built-in methods play (a sample of their episodes is played again here)."""

import numpy as np
import pytest

from coreenv import EnvConfig
from mara_agents.benchmark.protocol import CORE_BENCH_V1, STRESS
from mara_agents.benchmark.references import REFERENCE_METHODS, load_references
from mara_agents.evaluation import run_episodes
from mara_agents.sweep import episode_seed, make_scheduler

REFERENCES = load_references(CORE_BENCH_V1.name)
LEARNED = ("mara", "ppo")
"""Methods whose torch floats may differ in the last bits between machines."""
EQUAL_ONLY = ("ppo",)
"""Methods that read no node speeds or switch costs: they play the equal clusters only."""


def test_every_built_in_method_has_every_episode_of_the_cells_it_plays():
    assert REFERENCES.methods == list(REFERENCE_METHODS)
    cells = [*CORE_BENCH_V1.cells(), CORE_BENCH_V1.stress_cell()]
    for method in REFERENCE_METHODS:
        for cell in cells:
            rates = REFERENCES.rates(method, cell, 10**6)
            if method in EQUAL_ONLY and "mixed" in cell.cluster:
                assert rates is None
                continue
            assert rates is not None and len(rates) == CORE_BENCH_V1.episodes_of(cell), cell
            assert ((0 <= rates) & (rates <= 1)).all()


@pytest.mark.parametrize("method", REFERENCE_METHODS)
def test_a_sample_of_each_methods_references_is_played_again(method):
    """The first and the last episode of a cell on four nodes and, but for the learned methods
    (the dearest to play), of the protocol's last cell; exact but for the learned methods, whose
    floats may differ in the last bits between machines (tolerance 0.02: about a task)."""
    skipped = "mixed" if method in EQUAL_ONLY else None
    plays = [c for c in CORE_BENCH_V1.cells() if skipped is None or skipped not in c.cluster]
    cells = [plays[len(plays) // 3]] + ([] if method in LEARNED else [plays[-1]])
    for cell in cells:
        env = CORE_BENCH_V1.env(cell.cluster)
        last = CORE_BENCH_V1.episodes_of(cell) - 1
        seeds = [episode_seed(0, 0), episode_seed(0, last)]
        episodes = [(EnvConfig(task_set=cell.task_set, arrival_prob=cell.arrival_prob, **env), s)
                    for s in seeds]  # fmt: skip
        played = [row["completion_rate"] for row in run_episodes(make_scheduler(method), episodes)]
        shipped = REFERENCES.rates(method, cell, last + 1)[[0, last]]
        tolerance = 0.02 if method in LEARNED else 0.0
        assert np.abs(np.array(played) - shipped).max() <= tolerance, (cell, played, shipped)


def test_the_stress_cell_is_held_apart_from_the_scored_cells():
    assert STRESS not in {cell.cluster for cell in CORE_BENCH_V1.cells()}
    assert REFERENCES.rates("oracle", CORE_BENCH_V1.stress_cell(), 10) is not None
