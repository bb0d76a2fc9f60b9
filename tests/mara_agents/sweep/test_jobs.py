"""Episodes of the sweep: rows carry the job and its fingerprint; a batched method's episodes of a
task set play together, others one per call."""

import pytest

from helpers import OneByOne
from mara_agents.schedulers import FIFO
from mara_agents.sweep import (
    BATCH_LANES,
    Job,
    SweepConfig,
    env_config,
    run_job,
    run_jobs_together,
    work_units,
)


def test_rows_carry_the_job_and_its_fingerprint():
    row = run_job(Job("fifo", "synthetic", 0.04, 3, fingerprint="abc"))
    assert row["fingerprint"] == "abc" and row["seed"] == 3 and 0 <= row["completion_rate"] <= 1


def test_jobs_played_together_give_the_rows_of_jobs_played_alone():
    jobs = [Job("fifo", "synthetic", load, seed) for load in (0.04, 0.08) for seed in (1, 2)]
    drop = lambda row: {k: v for k, v in row.items() if k != "seconds"}  # noqa: E731
    together = [drop(row) for row in run_jobs_together(jobs)]
    assert together == [drop(run_job(job)) for job in jobs]


def test_a_job_plays_its_environment_overrides_and_its_row_names_them():
    job = Job("fifo", "synthetic", 0.04, 3, env=(("num_nodes", 2), ("num_slots", 4)))
    config = env_config(job)
    assert (config.num_nodes, config.num_slots, config.task_set) == (2, 4, "synthetic")
    assert run_job(job)["env"] == {"num_nodes": 2, "num_slots": 4}
    assert "env" not in run_job(Job("fifo", "synthetic", 0.04, 3))  # rows as before


def test_jobs_of_two_methods_cannot_run_together():
    with pytest.raises(ValueError, match="one method"):
        run_jobs_together([Job("fifo", "synthetic", 0.04, 1), Job("edf", "synthetic", 0.04, 1)])


def test_a_batched_method_plays_each_task_set_together_and_others_play_alone():
    pytest.importorskip("torch")
    mara = [Job("mara", ts, 0.04, s) for ts in ("id", "rl_ood") for s in range(BATCH_LANES + 1)]
    alone = [Job("alone", "id", 0.04, s) for s in range(3)]  # a scheduler with only act
    factories = {**SweepConfig(methods=["mara"]).factories, "alone": lambda: OneByOne(FIFO())}
    units = work_units(alone + mara, factories)
    assert [len(unit) for unit in units] == [BATCH_LANES, BATCH_LANES, 1, 1] + [1, 1, 1]
    assert all(len({job.task_set for job in unit}) == 1 for unit in units)
    assert sorted(job.seed for unit in units for job in unit if job.method == "alone") == [0, 1, 2]


class Observing(FIFO):
    """FIFO whose environment carries WLS estimates: a predictor call every step."""

    observation_predictor = "wls"


def test_units_of_methods_that_observe_estimates_start_first():
    fifo = [Job("fifo", "id", 0.04, s) for s in range(5)]
    observing = [Job("observing", "id", 0.04, s) for s in range(2)]
    factories = {"fifo": FIFO, "observing": Observing}
    units = work_units(fifo + observing, factories)
    assert [(unit[0].method, len(unit)) for unit in units] == [("observing", 2), ("fifo", 5)]
