"""`coreenv_lab.methods`: the studies' methods reach the sweep as ``module:function``, each named
as the studies' tables name it, and play the benchmark's episodes."""

import inspect

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from coreenv_lab import methods  # noqa: E402
from mara_agents.evaluation import completion_rates, evaluate  # noqa: E402
from mara_agents.sweep import SweepInputError, make_scheduler, validate  # noqa: E402
from mara_agents.sweep.methods import MOVED, RENAMED, method_factory  # noqa: E402

NAMES = sorted(
    name
    for name, function in vars(methods).items()
    if inspect.isfunction(function) and function.__module__ == methods.__name__
    and not name.startswith("_")
)  # fmt: skip


def test_every_method_that_left_the_package_is_a_lab_function():
    assert set(MOVED) == set(NAMES)  # mara_sets too: the first sets network, now the lab's
    assert not set(RENAMED) & set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_method_builds_by_module_and_function_under_its_own_name(name):
    scheduler = make_scheduler(f"coreenv_lab.methods:{name}")
    assert scheduler.name == name
    assert method_factory(f"coreenv_lab.methods:{name}")[0] == name


def test_mara_wls_is_deterministic_and_reads_wls():
    first = evaluate(methods.mara_wls(), episodes=1, seed=3, arrival_horizon=150)
    assert first == evaluate(methods.mara_wls(), episodes=1, seed=3, arrival_horizon=150)
    assert type(methods.mara_wls().observation_predictor).__name__ == "WLSPredictor"


def test_mara_events_holds_the_shipped_policy_s_decisions_up_to_its_hold():
    policy = methods.mara_events()
    assert (policy.decisions.at, policy.decisions.hold) == ("events", methods.EVENT_HOLD)
    assert methods.mara_sets().policy.config.sets


def test_the_history_policy_needs_descriptions_and_plays_with_them():
    with pytest.raises(SweepInputError, match="mara_history"):
        validate(["coreenv_lab.methods:mara_history"], ["id"], [0.04])
    validate(["coreenv_lab.methods:mara_history"], ["id"], [0.04], {"information": "history"})


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("ppo_slots", "SequentialPPOScheduler"),
        ("ppo_mlp", "SequentialPPOScheduler"),
        ("ippo_live", "IPPOScheduler"),
        ("ippo_sets", "IPPOScheduler"),
    ],
)
def test_the_lab_s_rl_baselines_play_the_benchmark_episodes(name, kind):
    pytest.importorskip("sb3_contrib")
    torch.set_num_threads(1)
    scheduler = make_scheduler(f"coreenv_lab.methods:{name}")
    assert type(scheduler).__name__ == kind and scheduler.name == name
    assert scheduler.decisions.at == "events"  # each plays in the form it was trained in
    env = {"task_set": "id", "arrival_prob": 0.04}
    rates = completion_rates(scheduler, 2, 1_000_000, **env)
    again = completion_rates(make_scheduler(f"coreenv_lab.methods:{name}"), 2, 1_000_000, **env)
    np.testing.assert_array_equal(rates, again)  # deterministic
    assert rates.mean() > 0.0


def test_the_sets_baseline_plays_a_bigger_cluster_and_the_fixed_ones_are_refused_up_front():
    pytest.importorskip("sb3_contrib")
    big = {"task_set": "id", "arrival_prob": 0.08, "num_nodes": 8, "num_slots": 16}
    assert completion_rates(methods.ippo_sets(), 1, 1_000_000, **big).mean() > 0.0
    for name, reason in (("ppo_slots", "trained at 4 nodes"), ("ippo_live", "another layout")):
        method = f"coreenv_lab.methods:{name}"
        with pytest.raises(SweepInputError, match=f"method '{name}': .*{reason}"):
            validate([method], ["id"], [0.08], {"num_nodes": 8, "num_slots": 16})
