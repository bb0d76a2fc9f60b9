"""The live source: tasks train real models on demand; coreenv finds it through an entry point."""

import math
import sys
from importlib.metadata import entry_points

import numpy as np
import pytest

from helpers import run_python

pytest.importorskip("torch")
pytest.importorskip("sklearn")

import coreenv  # noqa: E402
import curvegen  # noqa: E402
from coreenv import ConfigError  # noqa: E402
from coreenv.curves import ENTRY_POINT_GROUP, TASK_SETS, register_task_set  # noqa: E402
from curvegen import plan_runs  # noqa: E402
from curvegen.live import LiveCurves, LiveLosses  # noqa: E402
from curvegen.supervised import SupervisedRun, supervised_curve  # noqa: E402
from mara_agents.schedulers import FIFO, Oracle  # noqa: E402


def test_live_losses_train_on_demand_and_match_the_recorded_rule():
    spec = plan_runs(batches=30, runs_per_family=1, families=["logreg-digits"])[0]
    losses = LiveLosses(SupervisedRun(spec), batches=30)
    assert len(losses) == 31 and len(losses.values) == 1
    assert losses[5] == losses.values[5] and len(losses.values) == 6
    # both trained here, in this process: bit for bit
    np.testing.assert_array_equal(losses[:], supervised_curve(spec))
    with pytest.raises(IndexError):
        losses[31]


def test_live_task_set_trains_real_models():
    env = coreenv.parallel_env(
        task_set="live", arrival_horizon=40, arrival_prob=0.2, deadline_window=(20, 40), seed=0
    )
    observations, infos = env.reset()
    scheduler = FIFO()
    scheduler.reset(env)
    trained = 0
    while env.agents:
        observations, *_, infos = env.step(scheduler.act(observations, infos))
        if env.agents:
            trained = max(trained, int(env.view().batches.max()))
    metrics = env.metrics()
    assert metrics["arrivals"] > 0 and trained > 0
    assert math.isnan(metrics["feasibility_bound"])
    assert isinstance(env.source, LiveCurves)


def test_oracle_refuses_live_tasks():
    env = coreenv.parallel_env(task_set="live", arrival_prob=1.0, seed=0)
    observations, infos = env.reset()
    env.step({})
    oracle = Oracle()
    oracle.reset(env)
    with pytest.raises(ValueError, match="true demand"):
        oracle.act(observations, infos)


def test_live_runs_stop_at_their_last_batch():
    source = LiveCurves(batches=3)
    env = coreenv.parallel_env(
        task_set=source, arrival_prob=1.0, arrival_horizon=1, deadline_window=(10, 10), seed=0
    )
    env.reset()
    trained = 0
    for _ in range(9):
        env.step({"node_0": 0})
        if not env.agents:
            break
        trained = max(trained, int(env.view().batches.max()))
    assert trained == 3


def test_live_is_declared_by_the_entry_point_and_resolved_through_it():
    (point,) = {p.value: p for p in entry_points(group=ENTRY_POINT_GROUP, name="live")}.values()
    assert point.value == "curvegen:live_task_set"
    assert "live" in TASK_SETS and "live" in sorted(TASK_SETS)
    assert TASK_SETS["live"] is curvegen.live_task_set


def test_live_works_when_only_coreenv_is_imported():
    code = (
        "import sys, coreenv\n"
        "assert 'curvegen' not in sys.modules\n"
        "e = coreenv.parallel_env(task_set='live', arrival_prob=0.2, arrival_horizon=20, seed=0)\n"
        "e.reset()\n"
        "print(type(e.source).__module__, type(e.source).__name__)\n"
    )
    assert run_python(code).split() == ["curvegen.live", "LiveCurves"]


def test_live_without_torch_names_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "curvegen.live", None)  # as if torch could not be imported
    with pytest.raises(ConfigError, match=r"task_set 'live'.*pip install 'coreenv\[agents\]'"):
        curvegen.live_task_set()


def test_a_name_declared_by_an_installed_package_is_taken(monkeypatch):
    # as in a fresh process, where "live" is declared but not yet loaded
    unloaded = {k: v for k, v in TASK_SETS._factories.items() if k != "live"}
    monkeypatch.setattr(TASK_SETS, "_factories", unloaded)
    with pytest.raises(ConfigError, match="'live' is already declared by the entry point "):
        register_task_set("live", LiveCurves)
