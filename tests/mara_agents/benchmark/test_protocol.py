"""CoRE-Bench's protocol (`mara_agents.benchmark.protocol`): a fixed grid of cells and episodes."""

import pytest

from mara_agents.benchmark.protocol import CORE_BENCH_V1, STRESS
from mara_agents.sweep import EVAL_SEED_BASE


def test_v1_plays_three_clusters_three_task_sets_and_four_loads():
    cells = CORE_BENCH_V1.cells()
    assert len(cells) == 36 and len({cell.cluster for cell in cells}) == 3
    assert {cell.task_set for cell in cells} == {"id", "rl_ood", "vit_ood"}


def test_loads_scale_with_each_clusters_capacity():
    first = {cell.cluster: cell.arrival_prob for cell in CORE_BENCH_V1.cells(quick=True)}
    assert first == {"4/8 equal": 0.04, "8/16 equal": 0.08, "8/16 mixed_costly": 0.16}


def test_the_quick_subset_is_the_first_load_and_the_first_episodes():
    assert len(CORE_BENCH_V1.cells(quick=True)) == 9
    cell = CORE_BENCH_V1.cells()[0]
    assert CORE_BENCH_V1.episodes_of(cell, quick=True) == 10
    assert CORE_BENCH_V1.episodes_of(cell) == 100


def test_episodes_are_evaluation_seeds_and_the_stress_test_is_its_own_cell():
    from mara_agents.sweep import episode_seed

    assert episode_seed(0, 0) == EVAL_SEED_BASE
    stress = CORE_BENCH_V1.stress_cell()
    assert stress.cluster == STRESS and CORE_BENCH_V1.env(STRESS)["scenario"] == "infeasible_stress"


def test_a_rows_cluster_is_found_from_its_fields_and_an_unknown_one_is_named():
    for cluster in (*CORE_BENCH_V1.clusters, STRESS):
        assert CORE_BENCH_V1.cluster_of(CORE_BENCH_V1.env(cluster)) == cluster
    with pytest.raises(ValueError, match="no cluster of CoRE-Bench-v1"):
        CORE_BENCH_V1.cluster_of({"num_nodes": 3})
    with pytest.raises(ValueError, match="cluster must be one of"):
        CORE_BENCH_V1.env("3/6 equal")


def test_v1_is_frozen_a_change_to_what_it_plays_needs_a_new_version():
    """Any edit of this literal means results of CoRE-Bench-v1 would no longer compare: name the
    protocol anew (and make its references) instead."""
    assert (
        CORE_BENCH_V1.name,
        {name: dict(env) for name, env in CORE_BENCH_V1.clusters.items()},
        CORE_BENCH_V1.task_sets,
        CORE_BENCH_V1.loads,
        CORE_BENCH_V1.episodes,
        CORE_BENCH_V1.quick_episodes,
        dict(CORE_BENCH_V1.stress),
        CORE_BENCH_V1.stress_episodes,
        CORE_BENCH_V1.information,
    ) == (
        "CoRE-Bench-v1",
        {
            "4/8 equal": {"num_nodes": 4, "num_slots": 8},
            "8/16 equal": {"num_nodes": 8, "num_slots": 16},
            "8/16 mixed_costly": {
                "num_nodes": 8, "num_slots": 16, "node_speeds": "mixed", "switch_cost": 5
            },
        },
        ("id", "rl_ood", "vit_ood"),
        (0.04, 0.05, 0.06, 0.07),
        100,
        10,
        {"scenario": "infeasible_stress"},
        10,
        "prefix",
    )
