"""Grouped policy gradient: leave-one-out baselines, whole episodes, learning, resumption."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

torch = pytest.importorskip("torch")

from helpers import TINY_TRAINING_ENV  # noqa: E402
from mara_agents.evaluation import completion_rates  # noqa: E402
from mara_agents.policy import MAT, MATConfig  # noqa: E402
from mara_agents.schedulers.mara import MARA  # noqa: E402
from mara_agents.training.grouped import GroupedConfig, GroupedTrainer, leave_one_out  # noqa: E402

TINY_ENV = TINY_TRAINING_ENV


def trainer(seed=0, **fields):
    torch.manual_seed(seed)
    fields = {"workloads": 4, "group": 4, "lr": 3e-3, "anchor": 0.0, **fields}
    config = GroupedConfig(seed=seed, **fields)
    return GroupedTrainer(MAT(MATConfig(num_nodes=2, num_slots=3)), None, config, [TINY_ENV], 0)


def test_leave_one_out_subtracts_the_other_lanes_of_the_same_seed_at_the_same_step():
    returns = np.array([[3.0, 1.0, 2.0, 10.0, 10.0, 4.0]])  # two seeds, three lanes each
    np.testing.assert_allclose(leave_one_out(returns, 3), [[1.5, -1.5, 0.0, 3.0, 3.0, -6.0]])


@settings(max_examples=50, deadline=None)
@given(
    group=st.integers(2, 5),
    returns=arrays(np.float64, (7, 20), elements=st.floats(-100, 100, allow_nan=False)),
)
def test_advantages_of_a_seeds_lanes_sum_to_zero_at_every_step(group, returns):
    lanes = 20 - 20 % group
    advantage = leave_one_out(returns[:, :lanes], group)
    sums = advantage.reshape(7, lanes // group, group).sum(axis=2)
    np.testing.assert_allclose(sums, 0.0, atol=1e-9)


def test_each_update_plays_each_workload_seed_group_times_then_new_seeds():
    grouped = trainer()
    assert grouped.seeds() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]
    grouped.iterate()
    assert grouped.seeds()[:4] == [4, 4, 4, 4]


def test_a_decision_is_held_so_there_are_fewer_decisions_than_steps():
    every_step, held = trainer(hold=1), trainer(hold=8)
    assert len(every_step.collect().advantages) == every_step.env_steps
    assert len(held.collect().advantages) < held.env_steps / 2


def completion(model):
    """Mean completion rate of the deterministic policy on 32 fixed unseen episodes (paired)."""
    rates = completion_rates(MARA(model, None), 32, 10_000, **TINY_ENV)
    model.train()
    return rates.mean()


def test_a_short_grouped_run_improves_completion():
    torch.set_num_threads(1)
    grouped = trainer()
    before = completion(grouped.model)
    for _ in range(30):
        grouped.iterate()
    # a threshold, not a recorded number: float kernels differ between machines
    assert completion(grouped.model) > before + 0.05


def test_the_anchor_holds_the_policy_near_where_it_started():
    free, anchored = trainer(), trainer(anchor=10.0)
    for _ in range(5):
        free_kl = free.iterate()["kl"]
        anchored_kl = anchored.iterate()["kl"]
    assert anchored_kl < free_kl


def test_checkpoints_resume_bit_for_bit():
    straight = trainer()
    for _ in range(3):
        straight.iterate()
    first = trainer()
    first.iterate()
    state = first.state_dict()
    resumed = trainer(seed=1)  # other weights, to be overwritten
    resumed.load_state_dict(state)
    resumed.iterate()
    resumed.iterate()
    for key, value in straight.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"group": 1}, "GroupedConfig.group must be >= 2, got 1"),
        ({"hold": 0}, "GroupedConfig.hold must be >= 1, got 0"),
        ({"anchor": -0.1}, "GroupedConfig.anchor must be >= 0, got -0.1"),
        ({"lr": 0.0}, "GroupedConfig.lr must be > 0, got 0.0"),
    ],
)
def test_bad_config_is_refused_naming_the_field(fields, message):
    with pytest.raises(ValueError, match=message):
        GroupedConfig(**fields)
