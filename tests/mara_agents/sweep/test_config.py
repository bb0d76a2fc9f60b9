"""A sweep's config: run names follow the settings, and bad settings are refused by name."""

import pytest

from mara_agents.schedulers import FIFO
from mara_agents.sweep import SweepConfig


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
        ({"arrival_probs": [0.0]}, r"arrival_probs must lie in \(0, 1\]"),
        ({"methods": [FIFO, FIFO()]}, r"methods has duplicates: \('fifo', 'fifo'\)"),
        (
            {"env": {"arrival_prob": 0.1}},
            r"env sets \['arrival_prob'\]: use task_sets, arrival_probs",
        ),
        ({"env": {"num_gpus": 8}}, "SweepConfig.env: .*num_gpus"),
    ],
)
def test_bad_configs_are_refused_at_construction(overrides, message):
    with pytest.raises(ValueError, match=message):
        SweepConfig(**overrides)
