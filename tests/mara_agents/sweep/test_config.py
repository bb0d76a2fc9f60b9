"""A sweep's config: run names follow the settings, and bad settings are refused by name."""

import pytest

from mara_agents.schedulers import FIFO
from mara_agents.sweep import REFERENCE_LOADS, SweepConfig


def test_run_names_differ_between_runs_of_different_settings():
    a, b = SweepConfig(methods=["fifo"]), SweepConfig(methods=["edf"])
    assert a.run_name != b.run_name and SweepConfig(methods=("fifo",)).run_name == a.run_name
    assert SweepConfig(methods=["fifo"], env={"num_nodes": 8}).run_name != a.run_name


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"episodes": 0}, "episodes >= 1"),
        ({"backend": "slurm"}, "backend must be one of"),
        ({"methods": []}, "methods is empty"),
        ({"methods": ["fifo", "fifo"]}, "methods has duplicates"),
        ({"seeds": [0, 0]}, "seeds has duplicates"),
        ({"episodes": 10_001}, "seed groups would overlap"),
        ({"arrival_prob": [1.5]}, r"arrival_prob must be a finite number in \[0.0, 1.0\], got 1.5"),
        ({"arrival_prob": [-0.1]}, r"SweepConfig.arrival_prob must be .* got -0.1"),
        ({"methods": [FIFO, FIFO()]}, r"methods has duplicates: \('fifo', 'fifo'\)"),
        (
            {"env": {"arrival_prob": 0.1}},
            r"env sets \['arrival_prob'\]: use task_sets, arrival_prob and strict",
        ),
        ({"env": {"num_gpus": 8}}, "SweepConfig.env: .*num_gpus"),
    ],
)
def test_bad_configs_are_refused_at_construction(overrides, message):
    with pytest.raises(ValueError, match=message):
        SweepConfig(**overrides)


def test_the_default_loads_are_the_papers_per_unit_of_capacity():
    assert SweepConfig().arrival_prob == REFERENCE_LOADS == (0.04, 0.05, 0.06, 0.07)
    assert SweepConfig(env={"num_nodes": 8}).arrival_prob == (0.08, 0.1, 0.12, 0.14)
    mixed = SweepConfig(env={"num_nodes": 8, "node_speeds": "mixed"})
    assert mixed.arrival_prob == (0.16, 0.2, 0.24, 0.28)
    assert SweepConfig(arrival_prob=[0.05], env={"num_nodes": 8}).arrival_prob == (0.05,)


def test_the_sweep_holds_p_to_the_environments_one_rule():
    assert SweepConfig(arrival_prob=[0.0, 1.0]).arrival_prob == (0.0, 1.0)  # as EnvConfig does
    for bad in (1.5, float("nan"), True):
        with pytest.raises(ValueError, match="arrival_prob must be a finite number in"):
            SweepConfig(arrival_prob=[bad])
