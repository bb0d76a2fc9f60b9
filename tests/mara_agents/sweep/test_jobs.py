"""One episode of the sweep: its row carries the job and the fingerprint of what produced it."""

from mara_agents.sweep import Job, run_job


def test_rows_carry_the_job_and_its_fingerprint():
    row = run_job(Job("fifo", "synthetic", 0.04, 3, fingerprint="abc"))
    assert row["fingerprint"] == "abc" and row["seed"] == 3 and 0 <= row["completion_rate"] <= 1
