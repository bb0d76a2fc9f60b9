"""The sweep engine: configs, run names and the progress meter."""

import io
from dataclasses import replace

import pytest

from mara_agents.schedulers import FIFO
from mara_agents.sweep import Job, Progress, SweepConfig, report, run_sweep


def test_run_names_differ_between_runs_of_different_settings():
    a, b = SweepConfig(methods=["fifo"]), SweepConfig(methods=["edf"])
    assert a.run_name != b.run_name and SweepConfig(methods=("fifo",)).run_name == a.run_name
    assert SweepConfig(methods=["fifo"], env={"num_nodes": 8}).run_name != a.run_name


def test_progress_time_left_weights_episodes_by_their_methods_cost():
    jobs = [Job(m, "synthetic", 0.04, s) for m in ("fifo", "mara") for s in range(3)]
    meter = Progress(jobs, workers=2, stream=io.StringIO())
    meter.update({"method": "fifo", "seconds": 0.1})
    meter.update({"method": "mara", "seconds": 10.0})
    assert meter.time_left() == pytest.approx((2 * 0.1 + 2 * 10.0) / 2)


def test_progress_shows_episodes_per_method_and_the_weighted_time_left():
    jobs = [Job(m, "synthetic", 0.04, s) for m in ("fifo", "mara") for s in range(3)]
    stream = io.StringIO()
    meter = Progress(jobs, workers=1, stream=stream)
    for method, seconds in (("fifo", 1.0), ("mara", 3.0), ("mara", 3.0)):
        meter.update({"method": method, "seconds": seconds})
    meter.close()
    last = stream.getvalue().split("\r")[-1]
    assert "3/6 episodes" in last and "fifo 1/3 mara 2/3" in last
    assert "~5s left" in last  # 2 fifo at 1 s and 1 mara at 3 s, one worker


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
        ({"methods": [FIFO, FIFO()]}, r"methods has duplicates: \('fifo', 'fifo'\)"),
        ({"env": {"arrival_prob": 0.1}}, r"env sets \['arrival_prob'\]: use task_sets, loads"),
        ({"env": {"num_gpus": 8}}, "SweepConfig.env: .*num_gpus"),
    ],
)
def test_bad_configs_are_refused_at_construction(overrides, message):
    with pytest.raises(ValueError, match=message):
        SweepConfig(**overrides)


class Idle:
    """A user's scheduler object: every node idles."""

    name = "idle"

    def reset(self, env):
        self.idle = env.config.num_slots

    def act(self, observations, infos):
        return {agent: self.idle for agent in observations}


def test_a_sweep_of_objects_and_settings_runs_in_memory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = SweepConfig(
        methods=[FIFO, Idle(), "lara"],
        task_sets=["synthetic"],
        loads=[0.04],
        episodes=2,
        workers=2,
        env={"num_nodes": 2, "num_slots": 4},
    )
    rows = run_sweep(config, stream=io.StringIO())
    assert list(tmp_path.iterdir()) == []  # nothing written
    assert config.names == ("fifo", "idle", "lara")
    assert sorted((r["method"], r["seed"]) for r in rows) == [
        (m, s) for m in ("fifo", "idle", "lara") for s in (1_000_000, 1_000_001)
    ]
    assert all(r["env"] == {"num_nodes": 2, "num_slots": 4} for r in rows)
    assert all(r["completion_rate"] == 0 for r in rows if r["method"] == "idle")
    assert "| idle |" in report(rows, config)
    by_name = run_sweep(replace(config, methods=["fifo"]), io.StringIO())  # the class, by name
    rates = {(r["method"], r["seed"]): r["completion_rate"] for r in rows}
    assert len(by_name) == 2
    assert all(rates["fifo", r["seed"]] == r["completion_rate"] for r in by_name)
