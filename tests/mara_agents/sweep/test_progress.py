"""The sweep's progress bar: episodes per method, and a time left weighted by their cost."""

import io

import pytest

from mara_agents.sweep import Job, Progress


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
