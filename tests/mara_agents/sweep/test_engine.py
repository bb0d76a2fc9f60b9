"""The sweep engine: configs, run names and the progress meter."""

import io
from pathlib import Path

import pytest

from mara_agents.sweep import Job, Progress, SweepConfig


def test_default_out_folders_differ_between_runs_of_different_settings():
    a, b = SweepConfig(methods=["fifo"]), SweepConfig(methods=["edf"])
    assert a.folder != b.folder and a.folder.parent.name == "results"
    assert SweepConfig(methods=("fifo",)).folder == a.folder
    assert SweepConfig(methods=["fifo"], out=Path("mine")).folder == Path("mine")


def test_progress_time_left_weights_episodes_by_their_methods_cost():
    jobs = [Job(m, "synthetic", 0.04, s) for m in ("fifo", "mara") for s in range(3)]
    meter = Progress(jobs, workers=2, stream=io.StringIO())
    meter.update({"method": "fifo", "seconds": 0.1})
    meter.update({"method": "mara", "seconds": 10.0})
    assert meter.time_left() == pytest.approx((2 * 0.1 + 2 * 10.0) / 2)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"episodes": 0}, "episodes >= 1"),
        ({"backend": "slurm"}, "backend must be one of"),
        ({"methods": []}, "methods is empty"),
        ({"methods": ["fifo", "fifo"]}, "methods has duplicates"),
        ({"seeds": [0, 0]}, "seeds has duplicates"),
        ({"episodes": 10_001}, "seed groups would overlap"),
        ({"loads": [0.0]}, r"loads must lie in \(0, 1\]"),
    ],
)
def test_bad_configs_are_refused_at_construction(overrides, message):
    with pytest.raises(ValueError, match=message):
        SweepConfig(**overrides)
