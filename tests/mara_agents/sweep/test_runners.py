"""Running a sweep: scheduler objects, factories and names, environment settings, in memory."""

import io
import json
from dataclasses import replace

import pytest

from helpers import run_python
from mara_agents.schedulers import FIFO
from mara_agents.sweep import SweepConfig, SweepInputError, report, run_sweep


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
        arrival_prob=[0.04],
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


def test_workers_forked_after_torch_ran_on_threads_do_not_hang():
    """A torch method's episodes in worker processes, after the parent used torch's threads."""
    code = (
        "import torch\n"
        "torch.set_num_threads(2)\n"
        "torch.ones(512, 512) @ torch.ones(512, 512)\n"
        "from mara_agents.sweep import SweepConfig, run_sweep\n"
        "config = SweepConfig(methods=['ppo'], task_sets=['id'], arrival_prob=[0.04, 0.05],"
        " episodes=1, workers=2)\n"
        "rows = run_sweep(config)\n"
        "print(len(rows), torch.get_num_threads())\n"
    )
    last = run_python(code, timeout=120).splitlines()[-1]
    assert last.split() == ["2", "2"]  # every row, and the parent's threads as they were


def test_a_row_written_before_the_arrival_probability_had_one_name_reads_as_today(tmp_path):
    from mara_agents.sweep import read_rows

    old = {"method": "fifo", "task_set": "id", "load": 0.04, "seed": 1000000, "successes": 3}
    today = {**{k: v for k, v in old.items() if k != "load"}, "arrival_prob": 0.04}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(old) + "\n" + json.dumps(today) + "\n")
    first, second = read_rows(path)
    assert first == second == today


def test_a_factory_that_cannot_reach_a_worker_is_refused_by_name():
    def nested():  # defined inside a function: it does not pickle
        return FIFO()

    nested.name = "nested_fifo"
    config = SweepConfig(
        methods=[nested],
        task_sets=["synthetic"],
        arrival_prob=[0.04],
        episodes=1,
        workers=2,
        env={"num_nodes": 2, "num_slots": 4},
    )
    with pytest.raises(SweepInputError, match="method 'nested_fifo' cannot be sent to a worker"):
        run_sweep(config, stream=io.StringIO())
    rows = run_sweep(replace(config, workers=1), stream=io.StringIO())
    assert [r["method"] for r in rows] == ["nested_fifo"]
